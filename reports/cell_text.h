// How report.md and report.html print a number or an expectation value in a
// table cell: one definition, so the two reports never disagree. Pure.
#pragma once

#include <optional>
#include <string>

#include "reports/summary.h"

namespace fdrill {

// What a cell shows when there is no value.
inline constexpr char kNoValue[] = "—";

// `x` with `decimals` decimals, or kNoValue.
std::string CellNumber(const std::optional<double>& x, int decimals);

// yes / no for a bool, 4 significant digits for a number, else kNoValue.
std::string CellExpectValue(const ExpectValue& v);

}  // namespace fdrill
