// libFuzzer target: the control plane's frame decoder (common/wire) fed
// arbitrary bytes, split at a point the input chooses, as TCP may deliver
// them. Beyond "no crash, no sanitizer report" it checks a property: every
// message the decoder accepts re-encodes (EncodeFrame) to a frame a fresh
// decoder reads back as the same message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/wire/wire.h"

namespace {

constexpr uint32_t kMaxFrame = 64 * 1024;  // small, so oversize frames are reached often

void Drain(fdrill::FrameDecoder& decoder) {
  for (int i = 0; i < 10000; ++i) {
    auto next = decoder.Next();
    if (!next.ok() || !next->has_value()) return;
    const fdrill::Json& message = **next;
    fdrill::FrameDecoder again(kMaxFrame * 2);
    again.Feed(fdrill::EncodeFrame(message));
    auto back = again.Next();
    if (!back.ok() || !back->has_value() || **back != message) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  fdrill::FrameDecoder decoder(kMaxFrame);
  decoder.Feed(bytes.substr(0, cut));
  Drain(decoder);
  decoder.Feed(bytes.substr(cut));
  Drain(decoder);
  return 0;
}
