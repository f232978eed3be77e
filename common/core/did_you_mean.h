// DidYouMean: the hint for a misspelt name (a scenario key, a fault kind, a
// rail): the closest candidate at most two edits away (Levenshtein).
#pragma once

#include <set>
#include <string>

namespace fdrill {

// "did you mean \"rate\"?" when a close match exists, else "".
std::string DidYouMean(const std::string& word, const std::set<std::string>& candidates);

}  // namespace fdrill
