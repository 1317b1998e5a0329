// Element values of weight tensors, for code that computes with them at generation time: the
// ONNX importer's constant folding (frontend/onnx/const_eval.cc) and the fold_constant graph pass
// (passes/fold_constant.cc). Integers are held exactly as int64, floats as double; a Tensor's
// little-endian bytes are decoded and encoded here (see weights.h for the dtypes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "generator/weights/weights.h"

namespace msc::weights {

/// int8, int16, int32, int64, uint8 and bool: the dtypes whose values are held as int64.
bool IsIntDtype(const std::string& dtype);

/// Integer values of an integer tensor (int8..int64, uint8, bool); nullopt for floats.
std::optional<std::vector<int64_t>> TensorInts(const Tensor& t);
/// Values of a tensor as doubles (any numeric dtype incl. float16 and bfloat16; exact).
std::vector<double> TensorDoubles(const Tensor& t);
/// A tensor of `dtype` and `shape` holding `values` (converted: integers truncated toward zero as
/// DoubleToInt64 does, bool = nonzero, float32 through ToFloat, float16 / bfloat16 through float).
/// Throws msc::Error for a dtype it does not write.
Tensor MakeTensor(const std::string& dtype, const std::vector<int64_t>& shape,
                  const std::vector<double>& values);
/// A tensor of integer `dtype` holding `values`, each truncated to the dtype's width (two's
/// complement, as WrapInt); bool = nonzero. A float dtype gets the values converted as doubles.
Tensor MakeIntTensor(const std::string& dtype, const std::vector<int64_t>& shape,
                     const std::vector<int64_t>& values);

/// x truncated toward zero to int64 as x86's cvttsd2si converts (what numpy, torch and ONNX
/// Runtime give there): NaN and values outside [-2^63, 2^63) become INT64_MIN. static_cast is
/// undefined behavior for those (found by tests/fuzz/fuzz_onnx).
int64_t DoubleToInt64(double x);
/// Whether x truncated toward zero is an int64 (false for NaN, +-inf and |x| >= 2^63): the
/// condition under which static_cast<int64_t>(x) is defined (C++17 [conv.fpint]).
bool FitsInt64(double x);
/// double -> float rounded to nearest; beyond float's finite range gives +-inf (static_cast is
/// undefined there: UBSan float-cast-overflow), NaN stays NaN.
float ToFloat(double x);
/// v reduced to integer `dtype` as a C cast / torch .to() / TVM's cast do it: the low bits kept
/// (two's complement) for int8..int32 and uint8, bool = (v != 0); int64 as is.
int64_t WrapInt(const std::string& dtype, int64_t v);

/// ir::ShapeNumel, with INT64_MAX when a dim is negative or the product overflows int64, so that
/// every "ShapeNumel(shape) > limit" check refuses such shapes. A 0 dim makes the product 0
/// wherever it is, even after dims whose product overflows.
int64_t ShapeNumel(const std::vector<int64_t>& shape);
/// Row-major strides (elements) of `shape`. They fit in int64 whenever the element count does,
/// except for a tensor with no elements, whose other dims may multiply past int64 (found by
/// tests/fuzz/fuzz_onnx: signed overflow); such a tensor is never indexed, its strides read 0.
std::vector<int64_t> Strides(const std::vector<int64_t>& shape);
/// numpy broadcasting of several shapes (numpy "General Broadcasting Rules": align on the last
/// dim, each pair equal or one of them 1); nullopt when incompatible.
std::optional<std::vector<int64_t>> BroadcastShapes(
    const std::vector<std::vector<int64_t>>& shapes);
/// Index of output element `k` (row-major in `out_shape`) in a broadcast input of `in_shape`.
int64_t BroadcastIndex(int64_t k, const std::vector<int64_t>& out_shape,
                       const std::vector<int64_t>& in_shape);

/// A tensor's values for computing: integer dtypes in `i` (exact), float dtypes in `f`.
struct Values {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> i;  ///< integer dtypes (IsIntDtype)
  std::vector<double> f;   ///< float dtypes
  bool is_int() const { return IsIntDtype(dtype); }
  int64_t size() const { return static_cast<int64_t>(is_int() ? i.size() : f.size()); }
  double at(int64_t k) const { return is_int() ? static_cast<double>(i[k]) : f[k]; }
};

/// The values of `t` (dtype and shape kept).
Values ToValues(const Tensor& t);
/// The tensor holding `v` (MakeIntTensor / MakeTensor).
Tensor FromValues(const Values& v);
/// Values of `dtype` and `shape`, all zero (room for ShapeNumel(shape) elements).
Values ValuesLike(const std::string& dtype, const std::vector<int64_t>& shape);
/// r[k] = v: DoubleToInt64(v) for integer dtypes, v for float ones.
void SetValue(Values& r, int64_t k, double v);
/// r[k] = a[src_k]; exact between two integer dtypes, else through double.
void CopyValue(Values& r, int64_t k, const Values& a, int64_t src_k);

}  // namespace msc::weights
