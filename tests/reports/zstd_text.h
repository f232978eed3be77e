// Test helper: TEXT as one zstd frame (what `zstd` writes), for the
// metrics.jsonl.zst tests. Needs libzstd linked.
#pragma once

#include <zstd.h>

#include <string>

namespace fdrill::reports_test {

inline std::string ZstdCompress(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
  if (ZSTD_isError(n)) return "";
  out.resize(n);
  return out;
}

}  // namespace fdrill::reports_test
