#include "agents/metrics_tail.h"

#include <filesystem>
#include <fstream>

#include "common/core/json.h"

namespace fdrill {

std::vector<Json> MetricsTail::Poll(size_t max_records) {
  std::vector<Json> out;
  if (dir_.empty()) return out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    if (entry.path().extension() != ".jsonl") continue;
    FileState& st = files_[entry.path().string()];
    // Nothing new since the last look (most files at most polls): not opened.
    const auto size = entry.file_size(ec);
    if (!ec && size <= st.offset) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    if (!in) continue;
    in.seekg(static_cast<std::streamoff>(st.offset));
    if (chunk_.empty()) chunk_.resize(1 << 16);
    std::string& chunk = chunk_;
    while (out.size() < max_records &&
           in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())).gcount() > 0) {
      size_t got = static_cast<size_t>(in.gcount());
      st.offset += got;
      st.partial.append(chunk.data(), got);
      size_t start = 0, nl;
      while ((nl = st.partial.find('\n', start)) != std::string::npos) {
        Json j = ParseOutsideJson(std::string_view(st.partial).substr(start, nl - start));
        if (!j.is_discarded()) out.push_back(std::move(j));
        start = nl + 1;
      }
      st.partial.erase(0, start);
      if (got < chunk.size()) break;
    }
  }
  return out;
}

}  // namespace fdrill
