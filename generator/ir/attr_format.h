// MSC's string forms of attribute values, for code that writes MSCGraphs (frontends).
//
// The rules are MSC's writer (apache/tvm v0.20 src/contrib/msc/core/ir/graph_builder.h
// AttrGetter, src/contrib/msc/core/utils.cc StringUtils::ToString), as python/msc_export/mscfmt.py
// implements them for the torch.fx exporter: ints via std::to_string, bools "1"/"0", lists joined
// by ',' with a trailing ',' for one element ("1,"), "" for an empty list. Floats are
// std::to_string ("%f", "0.000010"), except that a value the 6 fixed decimals would not give back
// (MSC's defect: 1e-12 became "0.000000") is written in the shortest form that round-trips.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace msc::ir {

std::string AttrInt(int64_t value);
std::string AttrBool(bool value);
/// A float32 value (ONNX float attrs, relax float attrs): "%f" when it reads back as the same
/// float32, else the shortest "%.Ng" that does; "inf", "-inf", "nan".
std::string AttrFloat(float value);
/// A float64 value: as AttrFloat, round-tripping as a double.
std::string AttrDouble(double value);
std::string AttrInts(const std::vector<int64_t>& values);
std::string AttrFloats(const std::vector<float>& values);
std::string AttrStrs(const std::vector<std::string>& values);

}  // namespace msc::ir
