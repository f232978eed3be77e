// Json: the one JSON value type of the project (nlohmann::json). Wire
// messages, injector params, journals and reports all use it; it lives in
// core so that code below the wire (host, injectors) needs no wire header.
// nlohmann's parse and get<T> throw: catch them in the one file that calls.
#pragma once

#include <nlohmann/json.hpp>

namespace fdrill {

using Json = nlohmann::json;

}  // namespace fdrill
