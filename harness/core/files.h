// Whole-file reads and writes, as run and campaign directories use them.
#pragma once

#include <filesystem>
#include <string>

#include "harness/core/result.h"

namespace fdrill {

// The file's bytes. NotFound "cannot open PATH" when it cannot be opened;
// Unavailable "error reading PATH" on a read error.
Result<std::string> ReadWholeFile(const std::filesystem::path& path);

// Writes PATH.partial whole, then renames it over PATH: a reader (or a
// resume after SIGKILL) sees the old file or the new one, never half.
// Unavailable naming the file that could not be written or renamed.
Status WriteFileAtomically(const std::filesystem::path& path, const std::string& text);

}  // namespace fdrill
