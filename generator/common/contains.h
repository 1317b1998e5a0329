// Membership in a short list (optype lists, names): the one helper the generator's modules share
// for it.
#pragma once

#include <algorithm>
#include <vector>

namespace msc {

/// Whether `v` holds an element equal to `x` (a linear search: the lists it is used on are short).
template <typename T, typename U>
bool Contains(const std::vector<T>& v, const U& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace msc
