#include "harness/scenario/yaml_duplicates.h"

#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

namespace fdrill {

namespace {

// Walks the parser's events rather than the loaded node tree: the events are
// linear in the text, where the tree can repeat a subtree through aliases
// many times over (and an alias can make it a cycle).
class DuplicateFinder : public YAML::EventHandler {
 public:
  // The first repeat: where it is, its key, and the line of the first one.
  struct Found {
    YAML::Mark at;
    std::string key;
    int first_line = 0;
  };
  const std::optional<Found>& found() const { return found_; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { Done(); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { Done(); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string& value) override {
    if (!frames_.empty() && frames_.back().is_map && frames_.back().expect_key) {
      auto [it, fresh] = frames_.back().keys.emplace(value, mark.line);
      if (!fresh && !found_) found_ = Found{mark, value, it->second + 1};
    }
    Done();
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    frames_.push_back({false, false, {}});
  }
  void OnSequenceEnd() override { End(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    frames_.push_back({true, true, {}});
  }
  void OnMapEnd() override { End(); }

 private:
  struct Frame {
    bool is_map;
    bool expect_key;                  // a map's next node is a key, not a value
    std::map<std::string, int> keys;  // key -> its line (0-based)
  };

  // One whole node of the enclosing collection has been read: in a map,
  // keys and values alternate.
  void Done() {
    if (!frames_.empty() && frames_.back().is_map)
      frames_.back().expect_key = !frames_.back().expect_key;
  }
  void End() {
    frames_.pop_back();
    Done();
  }

  std::vector<Frame> frames_;
  std::optional<Found> found_;
};

std::string Place(const std::string& file, const YAML::Mark& m) {
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

}  // namespace

Status FindDuplicateKey(const std::string& file, const std::string& text) {
  std::istringstream in(text);
  DuplicateFinder finder;
  try {
    YAML::Parser parser(in);
    parser.HandleNextDocument(finder);  // the first document: the one YAML::Load reads
  } catch (const YAML::ParserException& e) {
    return InvalidArgument(Place(file, e.mark) + ": not valid YAML: " + e.msg);
  }
  if (const auto& f = finder.found()) {
    return InvalidArgument(Place(file, f->at) + ": duplicate key \"" + f->key +
                           "\" (first at line " + std::to_string(f->first_line) + ")");
  }
  return Status::Ok();
}

}  // namespace fdrill
