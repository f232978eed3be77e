#include "common/wire/wire.h"

#include <algorithm>

#include "common/core/json.h"

namespace fdrill {

std::string EncodeFrame(const Json& message) {
  std::string body = DumpJson(message);
  uint32_t n = static_cast<uint32_t>(body.size());
  std::string out;
  out.reserve(4 + body.size());
  out.push_back(static_cast<char>((n >> 24) & 0xff));
  out.push_back(static_cast<char>((n >> 16) & 0xff));
  out.push_back(static_cast<char>((n >> 8) & 0xff));
  out.push_back(static_cast<char>(n & 0xff));
  out += body;
  return out;
}

int JsonTextDepth(std::string_view body, int cap) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : body) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest >= cap) return cap;
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    }
  }
  return deepest;
}

void FrameDecoder::Compact() {
  if (offset_ == buffer_.size()) {
    // Everything read: the usual case between messages. A link to each of
    // 10,000 agents keeps a decoder; it holds nothing while idle.
    offset_ = 0;
    if (buffer_.capacity() > kIdleCapacity) {
      std::string().swap(buffer_);
    } else {
      buffer_.clear();
    }
  } else if (offset_ > 65536 && offset_ * 2 > buffer_.size()) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
}

Result<std::optional<Json>> FrameDecoder::Next() {
  if (buffer_.size() - offset_ < 4) return std::optional<Json>();
  const auto* p = reinterpret_cast<const unsigned char*>(buffer_.data() + offset_);
  uint32_t n =
      (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
  if (n == 0 || n > max_) {
    return InvalidArgument("frame of " + std::to_string(n) + " bytes refused (limit " +
                           std::to_string(max_) + ")");
  }
  if (buffer_.size() - offset_ - 4 < n) return std::optional<Json>();
  std::string_view body(buffer_.data() + offset_ + 4, n);
  if (JsonTextDepth(body) > kMaxFrameDepth) {
    return InvalidArgument("frame nests deeper than " + std::to_string(kMaxFrameDepth) +
                           " arrays and objects; refused (docs/reference/protocol.md)");
  }
  Json msg = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  offset_ += 4 + n;
  Compact();
  if (msg.is_discarded() || !msg.is_object()) return InvalidArgument("frame is not a JSON object");
  auto v = msg.find("v");
  if (v == msg.end() || !v->is_number_integer() || v->get<int>() != kWireVersion) {
    return InvalidArgument("unsupported protocol version (this side speaks v" +
                           std::to_string(kWireVersion) + ")");
  }
  if (!msg.contains("type") || !msg["type"].is_string() || !msg.contains("id") ||
      !msg["id"].is_number_unsigned()) {
    return InvalidArgument("message lacks a string type or an unsigned id");
  }
  return std::optional<Json>(std::move(msg));
}

Json MakeRequest(std::string_view type, uint64_t id, Json body) {
  if (!body.is_object()) body = Json::object();
  body["v"] = kWireVersion;
  body["type"] = type;
  body["id"] = id;
  return body;
}

uint64_t RequestId(const Json& request) {
  auto it = request.find("id");  // end() for a non-object
  return it != request.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

std::string RequestType(const Json& request) {
  auto it = request.find("type");
  return it != request.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Json MakeReply(uint64_t id, Json body) {
  if (!body.is_object()) body = Json::object();
  body["v"] = kWireVersion;
  body["type"] = "reply";
  body["id"] = id;
  body["ok"] = true;
  return body;
}

Json MakeErrorReply(uint64_t id, const Status& status) {
  Json body = {{"v", kWireVersion}, {"type", "reply"}, {"id", id}, {"ok", false}};
  body["code"] = StatusCodeName(status.code());
  body["error"] = status.message();
  return body;
}

Json MakePush(std::string_view type, Json body) { return MakeRequest(type, 0, std::move(body)); }

Result<Json> ReplyToResult(Json reply) {
  if (reply.value("ok", false)) return reply;
  return Status(StatusCodeFromName(reply.value("code", "internal")),
                reply.value("error", "agent gave no reason"));
}

}  // namespace fdrill
