// Whole-file reads and writes, as run and campaign directories use them.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "common/core/result.h"

namespace fdrill {

// The file's bytes. NotFound "cannot open PATH" when it cannot be opened;
// Unavailable "error reading PATH" on a read error.
Result<std::string> ReadWholeFile(const std::filesystem::path& path);

// Writes PATH.partial whole, then renames it over PATH: a reader (or a
// resume after SIGKILL) sees the old file or the new one, never half.
// Unavailable naming the file that could not be written or renamed.
Status WriteFileAtomically(const std::filesystem::path& path, const std::string& text);

// Ok when `name` can be one component of a path the program builds (a run
// directory from a scenario's name, a campaign's from its label): 1..100
// bytes of letters (UTF-8 ones too), digits, '.', '_', '-' and '+', not
// starting with '.' or '-'. So no separator, no "..", no hidden or option-like name.
// InvalidArgument saying what is wrong otherwise.
Status CheckPathComponent(std::string_view name);

}  // namespace fdrill
