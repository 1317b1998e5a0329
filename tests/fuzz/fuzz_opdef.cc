// libFuzzer harness: the opdef YAML loader (generator/opdef/opdef.cc on common/strict_yaml.cc).
//
//   input bytes -> OpDefRegistry::LoadString(text, "fuzz.yaml")
//     accepted: every attr of every op parses a few MSC attribute strings (ParseAttr) and checks
//     the result (CheckAttr): each call returns or throws msc::Error, and a value ParseAttr
//     returns for the attr's own type is a JSON value CheckAttr can judge;
//     rejected: msc::Error naming "fuzz.yaml".
#include <cstddef>
#include <cstdint>
#include <string>

#include "generator/common/error.h"
#include "generator/opdef/opdef.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr const char* kHarness = "opdef";
const std::string kFile = "fuzz.yaml";
// MSC attribute strings of every type (mscgraph_schema.md: "1,1", "1," one element, "" None).
const char* const kAttrStrings[] = {"",     "1",   "1,",   "1,1", "-1,2,3", "0.000010", "inf",
                                    "-inf", "nan", "true", "0",   "a,b",    "float32",  "NCHW"};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  msc::fuzz::AddDefaultFlags(argc, argv, {"-max_len=16384", msc::fuzz::DictFlag(kHarness)});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace opdef = msc::opdef;
  opdef::OpDefRegistry reg;
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (!msc::fuzz::Accepts<msc::Error>(kHarness, kFile, [&] { reg.LoadString(text, kFile); }))
    return 0;
  for (const auto& [optype, def] : reg.all()) {
    def.NamespaceAndName();
    for (const opdef::AttrDef& a : def.attrs) {
      msc::fuzz::Accepts<msc::Error>(kHarness, "", [&] { opdef::CheckAttr(a, a.default_value); });
      for (const char* s : kAttrStrings) {
        msc::fuzz::Accepts<msc::Error>(kHarness, "",
                                       [&] { opdef::CheckAttr(a, opdef::ParseAttr(a, s)); });
      }
    }
  }
  return 0;
}
