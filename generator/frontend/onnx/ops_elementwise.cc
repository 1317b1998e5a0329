// ONNX elementwise ops -> MSC elementwise optypes (opdefs/elementwise.yaml, nn.yaml). Ops with no
// single MSC optype are composed of MSC optypes following the ONNX spec's formula
// (onnx/docs/Operators.md; e.g. HardSigmoid = max(0, min(1, alpha * x + beta))).
#include <cmath>

#include "generator/frontend/onnx/const_eval.h"
#include "generator/frontend/onnx/convert.h"
#include "generator/ir/attr_format.h"

namespace msc::frontend::onnx_import {

namespace {

using C = ConvertContext;

/// One elementwise MSC node whose output has `like`'s shape and the given dtype.
std::string Ew(C& c, const std::string& optype, const std::vector<std::string>& ins,
               const OutSpec& like, const std::string& dtype = "",
               const ir::OrderedMap<std::string>& attrs = {}) {
  OutSpec o = like;
  if (!dtype.empty()) o.dtype = dtype;
  return c.Emit(optype, ins, attrs, {o})[0];
}

Converter Unary(const std::string& optype) {
  return [optype](C& c) { c.EmitOut(optype, {c.T(0)}, {}); };
}

/// Binary ops with numpy broadcasting (opset >= 7). Before opset 7, `broadcast=1` with `axis`
/// aligned B to A starting at `axis`; B is reshaped so that numpy broadcasting gives the same.
Converter Binary(const std::string& optype) {
  return [optype](C& c) {
    std::string b = c.T(1);
    if (c.opset < 7 && c.attrs.Int("broadcast", 0)) {
      const int64_t ra = c.Rank(0), rb = c.Rank(1);
      int64_t axis = c.attrs.Has("axis") ? c.attrs.Int("axis", 0) : ra - rb;
      if (axis < 0) axis += ra;
      std::vector<int64_t> shape = c.In(1).shape;
      for (int64_t k = axis + rb; k < ra; ++k) shape.push_back(1);
      if (static_cast<int64_t>(shape.size()) != rb)
        b = c.Emit("reshape", {b}, Attrs({{"shape", ir::AttrInts(shape)}}),
                   {{c.In(1).dtype, shape, {}}})[0];
    }
    c.EmitOut(optype, {c.T(0), b}, {});
  };
}

/// Max/Min/Sum/Mean over any number of inputs: a left fold of the binary op.
Converter Variadic(const std::string& optype, bool mean) {
  return [optype, mean](C& c) {
    OutSpec out = c.Out(0);
    std::string acc = c.T(0);
    for (int k = 1; k < c.NumInputs(); ++k) acc = c.Emit(optype, {acc, c.T(k)}, {}, {out})[0];
    if (mean && c.NumInputs() > 1)
      acc = Ew(c, "divide", {acc, Scalar(c, out.dtype, c.NumInputs())}, out);
    if (c.NumInputs() == 1) {
      c.Bind(0, acc);
      return;
    }
    c.Bind(0, acc);
  };
}

void Identity(C& c) {
  if (c.IsConst(0)) {
    c.BindConst(0, c.Const(0));
    return;
  }
  c.Bind(0, c.T(0));
}

void Cast(C& c) {
  OutSpec o = c.Out(0);
  if (o.dtype == c.In(0).dtype) return c.Bind(0, c.T(0));
  c.EmitOut("astype", {c.T(0)}, Attrs({{"dtype", o.dtype}}));
}

/// Clip: constant bounds -> `clip`; bounds computed at run time -> maximum / minimum (NumPy's
/// clip order: min first, then max, so min > max gives max as the spec says).
void Clip(C& c) {
  double lo = -INFINITY, hi = INFINITY;
  if (c.opset < 11) {
    lo = c.attrs.Float("min", -INFINITY);
    hi = c.attrs.Float("max", INFINITY);
  } else if ((c.Has(1) && !c.IsConst(1)) || (c.Has(2) && !c.IsConst(2))) {
    OutSpec o = c.Out(0);
    std::string r = c.T(0);
    if (c.Has(1)) r = Ew(c, "maximum", {r, c.T(1)}, o);
    if (c.Has(2)) r = Ew(c, "minimum", {r, c.T(2)}, o);
    return c.Bind(0, r);
  } else {
    if (c.Has(1)) lo = c.ConstDoubles(1).at(0);
    if (c.Has(2)) hi = c.ConstDoubles(2).at(0);
  }
  if (std::isinf(lo) && std::isinf(hi) && lo < 0 && hi > 0) return c.Bind(0, c.T(0));
  c.EmitOut("clip", {c.T(0)}, Attrs({{"min", ir::AttrDouble(lo)}, {"max", ir::AttrDouble(hi)}}));
}

void LeakyRelu(C& c) {
  c.EmitOut("nn.leakyrelu", {c.T(0)},
            Attrs({{"alpha", ir::AttrFloat(c.attrs.Float("alpha", 0.01f))}}));
}

/// where(x > 0, x, alpha * (exp(x) - 1)) [* gamma]: Elu, Selu (non-default), Celu.
void EluLike(C& c, double alpha, double gamma, bool celu) {
  OutSpec o = c.Out(0);
  const std::string x = c.T(0);
  std::string e = celu ? Ew(c, "divide", {x, Scalar(c, o.dtype, alpha)}, o) : x;
  e = Ew(c, "exp", {e}, o);
  e = Ew(c, "subtract", {e, Scalar(c, o.dtype, 1)}, o);
  e = Ew(c, "multiply", {e, Scalar(c, o.dtype, alpha)}, o);
  const std::string pos = Ew(c, "greater", {x, Scalar(c, o.dtype, 0)}, o, "bool");
  std::string r = Ew(c, "where", {pos, x, e}, o);
  if (gamma != 1) r = Ew(c, "multiply", {r, Scalar(c, o.dtype, gamma)}, o);
  c.Bind(0, r);
}

void Selu(C& c) {
  const float alpha = c.attrs.Float("alpha", 1.67326319217681884765625f);
  const float gamma = c.attrs.Float("gamma", 1.05070102214813232421875f);
  if (alpha == 1.67326319217681884765625f && gamma == 1.05070102214813232421875f)
    return void(c.EmitOut("nn.selu", {c.T(0)}, {}));
  EluLike(c, alpha, gamma, false);
}

void HardSigmoid(C& c, double alpha, double beta, bool times_x) {
  OutSpec o = c.Out(0);
  const std::string x = c.T(0);
  std::string r = Ew(c, "multiply", {x, Scalar(c, o.dtype, alpha)}, o);
  r = Ew(c, "add", {r, Scalar(c, o.dtype, beta)}, o);
  r = Ew(c, "clip", {r}, o, "", Attrs({{"min", "0"}, {"max", "1"}}));
  if (times_x) r = Ew(c, "multiply", {x, r}, o);
  c.Bind(0, r);
}

/// PRelu: where(x < 0, x * slope, x). Before opset 7 a 1-D slope of size C applies per channel
/// (axis 1), not numpy-style: it is reshaped to [C, 1, ...] first.
void PRelu(C& c) {
  OutSpec o = c.Out(0);
  const std::string x = c.T(0);
  const Value& s = c.In(1);
  std::string slope;
  const int64_t rank = c.Rank(0);
  if (c.opset < 7 && s.shape.size() == 1 && rank > 2 && s.shape[0] == c.In(0).shape[1] &&
      s.shape[0] != 1) {
    std::vector<int64_t> shape(static_cast<size_t>(rank - 1), 1);
    shape[0] = s.shape[0];
    if (s.constant) {
      weights::Tensor t = *s.constant;
      t.shape = shape;
      slope = c.ConstTensor(t, c.InName(1));
    } else {
      slope = c.Emit("reshape", {c.T(1)}, Attrs({{"shape", ir::AttrInts(shape)}}),
                     {{s.dtype, shape, {}}})[0];
    }
  } else {
    slope = c.T(1);
  }
  const std::string neg = Ew(c, "less", {x, Scalar(c, o.dtype, 0)}, o, "bool");
  const std::string scaled = Ew(c, "multiply", {x, slope}, o);
  c.Bind(0, Ew(c, "where", {neg, scaled, x}, o));
}

/// Pow: MSC's power takes one dtype. With an exponent of another dtype (Pow-12+), the power is
/// computed in the floating one of the two and cast to the base's dtype, as ONNX's reference
/// (np.power(x, y).astype(x.dtype)).
void Pow(C& c) {
  OutSpec o = c.Out(0);
  const std::string bd = c.In(0).dtype, ed = c.In(1).dtype;
  if (bd == ed) return void(c.EmitOut("power", {c.T(0), c.T(1)}, {}));
  const bool base_float = bd.rfind("float", 0) == 0, exp_float = ed.rfind("float", 0) == 0;
  const std::string compute = base_float ? bd : exp_float ? ed : bd;
  auto as = [&](int k, const std::string& dtype) {
    if (c.In(k).dtype == dtype) return c.T(k);
    OutSpec spec{dtype, c.In(k).shape, c.In(k).prims};
    return c.Emit("astype", {c.T(k)}, Attrs({{"dtype", dtype}}), {spec})[0];
  };
  OutSpec p = o;
  p.dtype = compute;
  std::string r = c.Emit("power", {as(0, compute), as(1, compute)}, {}, {p})[0];
  if (compute != o.dtype) r = Ew(c, "astype", {r}, o, "", Attrs({{"dtype", o.dtype}}));
  c.Bind(0, r);
}

void ThresholdedRelu(C& c) {
  OutSpec o = c.Out(0);
  const std::string x = c.T(0);
  const double alpha = c.attrs.Float("alpha", 1.0f);
  const std::string keep = Ew(c, "greater", {x, Scalar(c, o.dtype, alpha)}, o, "bool");
  c.Bind(0, Ew(c, "where", {keep, x, Scalar(c, o.dtype, 0)}, o));
}

void Softsign(C& c) {
  OutSpec o = c.Out(0);
  const std::string x = c.T(0);
  std::string d = Ew(c, "abs", {x}, o);
  d = Ew(c, "add", {d, Scalar(c, o.dtype, 1)}, o);
  c.Bind(0, Ew(c, "divide", {x, d}, o));
}

void Shrink(C& c) {
  OutSpec o = c.Out(0);
  const std::string x = c.T(0);
  const double bias = c.attrs.Float("bias", 0), lambd = c.attrs.Float("lambd", 0.5f);
  const std::string lo = Ew(c, "less", {x, Scalar(c, o.dtype, -lambd)}, o, "bool");
  const std::string hi = Ew(c, "greater", {x, Scalar(c, o.dtype, lambd)}, o, "bool");
  const std::string plus = Ew(c, "add", {x, Scalar(c, o.dtype, bias)}, o);
  const std::string minus = Ew(c, "subtract", {x, Scalar(c, o.dtype, bias)}, o);
  const std::string zero = Scalar(c, o.dtype, 0);
  std::string r = Ew(c, "where", {hi, minus, zero}, o);
  c.Bind(0, Ew(c, "where", {lo, plus, r}, o));
}

void Reciprocal(C& c) {
  OutSpec o = c.Out(0);
  c.Bind(0, Ew(c, "divide", {Scalar(c, o.dtype, 1), c.T(0)}, o));
}

void Mod(C& c) {
  OutSpec o = c.Out(0);
  if (!c.attrs.Int("fmod", 0)) return void(c.EmitOut("floor_mod", {c.T(0), c.T(1)}, {}));
  if (o.dtype.rfind("float", 0) != 0) c.Fail("fmod=1 on integers is not supported");
  // fmod(x, y) = x - y * trunc(x / y), trunc(q) = sign(q) * floor(|q|).
  const std::string x = c.T(0), y = c.T(1);
  std::string q = Ew(c, "divide", {x, y}, o);
  std::string t =
      Ew(c, "multiply", {Ew(c, "sign", {q}, o), Ew(c, "floor", {Ew(c, "abs", {q}, o)}, o)}, o);
  c.Bind(0, Ew(c, "subtract", {x, Ew(c, "multiply", {y, t}, o)}, o));
}

void IsInf(C& c) {
  OutSpec o = c.Out(0);
  const std::string x = c.T(0);
  const bool pos = c.attrs.Int("detect_positive", 1), neg = c.attrs.Int("detect_negative", 1);
  std::string r = Ew(c, "isinf", {x}, o);
  if (pos != neg) {
    const std::string sign =
        Ew(c, pos ? "greater" : "less", {x, Scalar(c, c.In(0).dtype, 0)}, o, "bool");
    r = Ew(c, "logical_and", {r, sign}, o);
  } else if (!pos) {
    r = Ew(c, "logical_and", {r, Ew(c, "logical_not", {r}, o)}, o);
  }
  c.Bind(0, r);
}

void Softplus(C& c) {
  c.EmitOut("nn.softplus", {c.T(0)}, Attrs({{"beta", "1.000000"}, {"threshold", "20.000000"}}));
}

/// Gelu (20): approximate "none" -> nn.gelu (x * Phi(x), erf form), "tanh" -> nn.gelu_tanh
/// (Hendrycks & Gimpel 2016, the tanh approximation both ONNX and torch name so).
void Gelu(C& c) {
  const std::string approximate = c.attrs.Str("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    c.Fail("approximate '" + approximate + "' is not 'none' or 'tanh'");
  c.EmitOut(approximate == "tanh" ? "nn.gelu_tanh" : "nn.gelu", {c.T(0)}, {});
}

}  // namespace

bool SwishTakes(const NodeAttrs& attrs) { return attrs.Float("alpha", 1.0f) == 1.0f; }

void RegisterElementwiseOps(ConverterMap& m) {
  m["Gelu"] = Gelu;
  // Swish (24) with alpha 1 is SiLU; other alphas take ONNX's function body (x * Sigmoid(alpha x)).
  m["Swish"] = [](C& c) { c.EmitOut("nn.silu", {c.T(0)}, {}); };
  for (const auto& [onnx_op, optype] : std::vector<std::pair<std::string, std::string>>{
           {"Abs", "abs"},     {"Acos", "acos"},      {"Acosh", "acosh"},     {"Asin", "asin"},
           {"Asinh", "asinh"}, {"Atan", "atan"},      {"Atanh", "atanh"},     {"Ceil", "ceil"},
           {"Cos", "cos"},     {"Cosh", "cosh"},      {"Erf", "erf"},         {"Exp", "exp"},
           {"Floor", "floor"}, {"Log", "log"},        {"Neg", "negative"},    {"Round", "round"},
           {"Sign", "sign"},   {"Sin", "sin"},        {"Sinh", "sinh"},       {"Sqrt", "sqrt"},
           {"Tan", "tan"},     {"Tanh", "tanh"},      {"Sigmoid", "sigmoid"}, {"Relu", "nn.relu"},
           {"IsNaN", "isnan"}, {"Not", "logical_not"}})
    m[onnx_op] = Unary(optype);
  for (const auto& [onnx_op, optype] :
       std::vector<std::pair<std::string, std::string>>{{"Add", "add"},
                                                        {"Sub", "subtract"},
                                                        {"Mul", "multiply"},
                                                        {"Div", "divide"},
                                                        {"Equal", "equal"},
                                                        {"Less", "less"},
                                                        {"LessOrEqual", "less_equal"},
                                                        {"Greater", "greater"},
                                                        {"GreaterOrEqual", "greater_equal"},
                                                        {"And", "logical_and"},
                                                        {"Or", "logical_or"},
                                                        {"Xor", "logical_xor"},
                                                        {"BitwiseAnd", "bitwise_and"},
                                                        {"BitwiseOr", "bitwise_or"},
                                                        {"BitwiseXor", "bitwise_xor"}})
    m[onnx_op] = Binary(optype);
  m["BitwiseNot"] = Unary("bitwise_not");
  m["Max"] = Variadic("maximum", false);
  m["Min"] = Variadic("minimum", false);
  m["Sum"] = Variadic("add", false);
  m["Mean"] = Variadic("add", true);
  m["Where"] = [](C& c) { c.EmitOut("where", {c.T(0), c.T(1), c.T(2)}, {}); };
  m["Identity"] = Identity;
  m["Cast"] = Cast;
  m["CastLike"] = Cast;
  m["Clip"] = Clip;
  m["LeakyRelu"] = LeakyRelu;
  m["Elu"] = [](C& c) { EluLike(c, c.attrs.Float("alpha", 1.0f), 1, false); };
  m["Celu"] = [](C& c) { EluLike(c, c.attrs.Float("alpha", 1.0f), 1, true); };
  m["Selu"] = Selu;
  m["HardSigmoid"] = [](C& c) {
    HardSigmoid(c, c.attrs.Float("alpha", 0.2f), c.attrs.Float("beta", 0.5f), false);
  };
  m["HardSwish"] = [](C& c) { HardSigmoid(c, 1.0 / 6, 0.5, true); };
  m["PRelu"] = PRelu;
  m["Pow"] = Pow;
  m["ThresholdedRelu"] = ThresholdedRelu;
  m["Softsign"] = Softsign;
  m["Softplus"] = Softplus;
  m["Shrink"] = Shrink;
  m["Reciprocal"] = Reciprocal;
  m["Mod"] = Mod;
  m["IsInf"] = IsInf;
}

}  // namespace msc::frontend::onnx_import
