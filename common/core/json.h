// Json: the one JSON value type of the project (nlohmann::json). Wire
// messages, injector params, journals and reports all use it; it lives in
// core so that code below the wire (host, injectors) needs no wire header.
// nlohmann's parse and get<T> throw: catch them in the one file that calls.
//
// Text from outside — interface names, a workload's log, process names,
// sysfs strings, a tool's output — may hold bytes that are not UTF-8 (a
// netdev may be named "\xff"). nlohmann's dump() throws on them
// (type_error.316), so JSON is written in one place, DumpJson, which writes
// each invalid sequence as U+FFFD and never throws; and a tool's JSON
// output is read with ParseOutsideJson, which makes the text valid first
// (nlohmann's parser refuses invalid UTF-8 outright). Nothing here recurses
// on a value's depth but nlohmann's own dump: values read from the wire are
// bounded by FrameDecoder's depth limit (common/wire/wire.h), and
// JsonDepth measures one without recursing.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace fdrill {

using Json = nlohmann::json;

// `text` with every byte sequence that is not well-formed UTF-8 (a stray
// continuation byte, a truncated or overlong sequence, a surrogate, a code
// point past U+10FFFF) replaced by U+FFFD. Valid text comes back unchanged.
std::string ValidUtf8(std::string_view text);

// The offset of the first byte of `text` that starts no well-formed UTF-8
// sequence (as ValidUtf8 judges it), or npos when it is all valid.
size_t FirstInvalidUtf8(std::string_view text);

// The last `max_bytes` (or fewer) of `text`, starting on a character
// boundary: a tail cut inside a multi-byte character drops its
// continuation bytes rather than leaving them invalid.
std::string_view Utf8Tail(std::string_view text, size_t max_bytes);

// j.dump(indent) that never throws: invalid UTF-8 in any string or key is
// written as U+FFFD. Every JSON text the project writes goes through here.
std::string DumpJson(const Json& j, int indent = -1);

// Json::parse of a tool's or a file's text without exceptions, after
// ValidUtf8: discarded when it is not JSON.
Json ParseOutsideJson(std::string_view text);

// How deeply `j` nests (a scalar 0, [] or {} 1, [[1]] 2), counted with an
// explicit stack; stops counting at `cap` (returns cap).
int JsonDepth(const Json& j, int cap = 1 << 20);

}  // namespace fdrill
