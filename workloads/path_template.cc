#include "workloads/path_template.h"

#include <unistd.h>

#include <cstdlib>

namespace fdrill {

void ReplaceAll(std::string* text, std::string_view from, std::string_view to) {
  for (size_t pos = text->find(from); pos != std::string::npos;
       pos = text->find(from, pos + to.size())) {
    text->replace(pos, from.size(), to);
  }
}

std::string ExpandPathTemplate(std::string_view path_template, int rank, std::string_view tmpdir,
                               std::string_view host) {
  std::string out(path_template);
  ReplaceAll(&out, "{rank}", std::to_string(rank));
  ReplaceAll(&out, "{tmpdir}", tmpdir);
  ReplaceAll(&out, "{host}", host);
  return out;
}

std::string TmpDirFromEnv() {
  const char* dir = std::getenv("TMPDIR");
  return (dir != nullptr && *dir != '\0') ? dir : "/tmp";
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

}  // namespace fdrill
