// FindDuplicateKey: a mapping that names the same key twice, anywhere in a
// YAML document. yaml-cpp keeps both pairs and a lookup finds only one, so
// `duration: 5s` above `duration: 50s` silently drops a setting; every file
// the scenario loader reads (the scenario, a topology) is checked before it
// is loaded. Keys compare by their text as written, unquoted ("a" and a are
// the same key); a key that is itself a mapping, a list or an alias is not
// compared (the section loaders refuse such keys by name).
#pragma once

#include <string>

#include "common/core/status.h"

namespace fdrill {

// Ok, or the first repeat in document order as
// "FILE:LINE:COL: duplicate key "KEY" (first at line N)"; TEXT that is not
// valid YAML is the parser's error at its place.
Status FindDuplicateKey(const std::string& file, const std::string& text);

}  // namespace fdrill
