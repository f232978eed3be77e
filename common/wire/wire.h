// The fdrill wire protocol, version 1: length-prefixed JSON frames.
//
//   frame   = u32 big-endian length N (1..kMaxFrameBytes) + N bytes of JSON
//   message = {"v": 1, "type": "<snake_case>", "id": <u64>, ...body keys}
//
// A frame's JSON may nest at most kMaxFrameDepth arrays and objects deep; a
// deeper one is refused by its bytes, before the JSON parser or anything
// recursive sees it (a frame 100,000 deep once overflowed the agent's stack
// in the audit writer). No message of the protocol nests past 8.
//
// Requests carry an id > 0; the reply is {"v":1,"type":"reply","id":<same>,
// "ok":true, ...} or {"ok":false,"code":"<status code>","error":"<message>"}.
// Messages pushed by an agent without a request (common/wire/protocol.h:
// proto::kPushTypes) use id 0. Encoding and decoding only: no sockets here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/core/json.h"
#include "common/core/result.h"

namespace fdrill {

inline constexpr int kWireVersion = 1;
inline constexpr uint32_t kMaxFrameBytes = 4u << 20;
inline constexpr int kMaxFrameDepth = 64;

// How deeply the JSON text `body` nests arrays and objects, read from its
// bytes (brackets outside strings) without parsing or recursing; stops at
// `cap`. A text that is not JSON gets some number; the parser refuses it.
int JsonTextDepth(std::string_view body, int cap = kMaxFrameDepth + 1);

std::string EncodeFrame(const Json& message);

// Incremental decoder for a byte stream. Feed bytes as they arrive; Next()
// yields whole messages. After an error the stream is unusable (the peer
// sent garbage or an oversize frame) and the connection must be dropped.
class FrameDecoder {
 public:
  explicit FrameDecoder(uint32_t max_frame_bytes = kMaxFrameBytes) : max_(max_frame_bytes) {}
  void Feed(std::string_view bytes) { buffer_.append(bytes); }
  // nullopt: need more bytes. Error: bad length, nested past
  // kMaxFrameDepth, bad JSON, bad version.
  Result<std::optional<Json>> Next();
  // Bytes the decoder holds on to (its buffer's capacity): small once every
  // frame fed has been read, whatever came before (a controller keeps one
  // decoder per agent link).
  size_t held_bytes() const { return buffer_.capacity(); }

 private:
  // Drops what has been read; an empty buffer keeps at most this much.
  void Compact();
  static constexpr size_t kIdleCapacity = 512;

  uint32_t max_;
  std::string buffer_;
  size_t offset_ = 0;
};

Json MakeRequest(std::string_view type, uint64_t id, Json body = Json::object());

// A request's "id" and "type" as sent, for its reply, log and audit line;
// they never throw: an id that is not an unsigned integer reads 0, a type
// that is not a string reads "" (which no handler answers to).
uint64_t RequestId(const Json& request);
std::string RequestType(const Json& request);
Json MakeReply(uint64_t id, Json body = Json::object());
Json MakeErrorReply(uint64_t id, const Status& status);
Json MakePush(std::string_view type, Json body = Json::object());

// For a reply: the reply itself when ok (moved, not copied, from an
// rvalue), else its Status.
Result<Json> ReplyToResult(Json reply);

}  // namespace fdrill
