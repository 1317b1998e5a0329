// msc_vk::SafetensorsFile: every rejection of runtime/vulkan/safetensors.cc (one case per check,
// each a one-line msc_vk::Error naming the file and, where there is one, the tensor), what it must
// accept (scalars, empty tensors, metadata, header padding, zero-length tensors sharing an
// offset), and Read()'s dtype/shape/size checks. No Vulkan device is used.
// The same wording is checked for the generated Python loaders by tests/loaders.
#include <sys/stat.h>
#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "test_util.h"

using msc_vk::DType;

namespace {

std::string U64LE(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A safetensors file: header length, `header` verbatim, then `data_bytes` zero bytes.
std::string Raw(const std::string& header, size_t data_bytes) {
  return U64LE(header.size()) + header + std::string(data_bytes, '\0');
}

// {"<name>": {"dtype": dtype, "shape": shape, "data_offsets": offsets}} as header text.
std::string Tensor(const std::string& name, const std::string& dtype, const std::string& shape,
                   const std::string& offsets) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":" + offsets + "}";
}

// Opens `bytes` written to a temporary file; expects an msc_vk::Error on one line that names the
// file (role and path) and contains every string of `needles`.
void ExpectRejected(const std::string& bytes, const std::vector<std::string>& needles) {
  const std::string path = vkt::TempPath("bad.safetensors");
  WriteBytes(path, bytes);
  try {
    msc_vk::SafetensorsFile f(path, "weights file");
    FAIL("accepted; expected an error containing " << needles.front());
  } catch (const msc_vk::Error& e) {
    const std::string msg = e.what();
    INFO("message: " << msg);
    CHECK(msg.rfind("weights file '" + path + "'", 0) == 0);
    CHECK(msg.find('\n') == std::string::npos);
    for (const std::string& n : needles) CHECK(msg.find(n) != std::string::npos);
  }
  std::remove(path.c_str());
}

}  // namespace

TEST_CASE("safetensors: truncated files and bad header lengths") {
  ExpectRejected("", {"0 bytes is too short for a safetensors header"});
  ExpectRejected(std::string(7, '\0'), {"7 bytes is too short for a safetensors header"});
  // Header length past the end of the file.
  ExpectRejected(U64LE(64) + "{}", {"header length 64 exceeds the file size of 10 bytes"});
  // Over the reference reader's limit (checked before the file size: no 100 MB allocation).
  ExpectRejected(U64LE(100000001) + "{}", {"header length 100000001 exceeds the limit of "
                                           "100000000 bytes"});
  ExpectRejected(U64LE(UINT64_MAX) + "{}", {"exceeds the limit of 100000000 bytes"});
  // A file cut inside the data section.
  const std::string h = "{" + Tensor("w", "F32", "[2,3]", "[0,24]") + "}";
  ExpectRejected(Raw(h, 20), {"tensor 'w': data_offsets [0, 24] lie outside the data section of "
                              "20 bytes (truncated file?)"});
}

TEST_CASE("safetensors: header text that is not a UTF-8 JSON object without duplicates") {
  ExpectRejected(Raw("", 0), {"header is not a JSON object (it does not start with '{')"});
  ExpectRejected(Raw("[1,2]", 0), {"header is not a JSON object"});
  ExpectRejected(Raw(" {}", 0), {"does not start with '{'"});
  ExpectRejected(Raw("{\"a\xff\":1}", 0), {"header is not valid UTF-8 (byte 3)"});
  ExpectRejected(Raw("{\"\xed\xa0\x80\":1}", 0), {"not valid UTF-8 (byte 2)"});  // a surrogate
  ExpectRejected(Raw("{\"\xc0\xaf\":1}", 0), {"not valid UTF-8 (byte 2)"});      // overlong '/'
  ExpectRejected(Raw("{\"a\":", 0), {"header is not valid JSON"});
  ExpectRejected(Raw("{} x", 0), {"header is not valid JSON"});
  ExpectRejected(Raw("{\"a\":NaN}", 0), {"header is not valid JSON"});
  // 100k nested arrays: refused before parsing (no deep parser stacks).
  ExpectRejected(Raw("{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}", 0),
                 {"header is not valid JSON: nested too deeply"});
  const std::string w = Tensor("w", "F32", "[1]", "[0,4]");
  ExpectRejected(Raw("{" + w + "," + w + "}", 4), {"header has a duplicate key 'w'"});
  ExpectRejected(Raw("{\"w\":{\"dtype\":\"F32\",\"dtype\":\"F64\",\"shape\":[1],"
                     "\"data_offsets\":[0,4]}}",
                     4),
                 {"header has a duplicate key 'dtype'"});
  ExpectRejected(Raw("{\"__metadata__\":{\"k\":1}}", 0),
                 {"'__metadata__' is not an object of strings"});
  ExpectRejected(Raw("{\"__metadata__\":[\"k\"]}", 0), {"'__metadata__' is not an object"});
}

TEST_CASE("safetensors: malformed entries name the tensor") {
  ExpectRejected(Raw("{\"w\":[1]}", 0),
                 {"tensor 'w': expected an object with keys dtype, shape, data_offsets"});
  ExpectRejected(Raw("{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4),
                 {"tensor 'w': expected an object with keys dtype, shape, data_offsets"});
  ExpectRejected(Raw("{" + Tensor("w", "Q4", "[1]", "[0,1]") + "}", 1),
                 {"tensor 'w': unsupported dtype \"Q4\""});
  ExpectRejected(Raw("{\"w\":{\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,4]}}", 4),
                 {"tensor 'w': unsupported dtype 7"});
  ExpectRejected(Raw("{\"w\":{\"dtype\":\"F32\",\"shape\":4,\"data_offsets\":[0,16]}}", 16),
                 {"tensor 'w': shape is not an array"});
  ExpectRejected(Raw("{" + Tensor("w", "F32", "[-1,4]", "[0,16]") + "}", 16),
                 {"tensor 'w': shape [-1,4] has a non-integer or negative dimension"});
  ExpectRejected(Raw("{" + Tensor("w", "F32", "[1.5]", "[0,4]") + "}", 4),
                 {"has a non-integer or negative dimension"});
  ExpectRejected(Raw("{" + Tensor("w", "F32", "[true]", "[0,4]") + "}", 4),
                 {"has a non-integer or negative dimension"});
  // Element counts past int64: the product, a single dim > INT64_MAX, and a product that
  // overflows before a later 0 (tensor.rs's checked_mul fold rejects it too).
  ExpectRejected(Raw("{" + Tensor("w", "F32", "[4294967296,4294967296,16]", "[0,4]") + "}", 4),
                 {"tensor 'w': shape [4294967296,4294967296,16] of dtype F32 overflows 64-bit "
                  "sizes"});
  ExpectRejected(Raw("{" + Tensor("w", "U8", "[9223372036854775808]", "[0,1]") + "}", 1),
                 {"overflows 64-bit sizes"});
  ExpectRejected(Raw("{" + Tensor("w", "F32", "[2147483648,2147483648,0]", "[0,0]") + "}", 0),
                 {"overflows 64-bit sizes"});
  ExpectRejected(Raw("{" + Tensor("w", "F32", "[1]", "[0]") + "}", 4),
                 {"tensor 'w': data_offsets [0] is not a pair of non-negative integers"});
  ExpectRejected(Raw("{" + Tensor("w", "F32", "[1]", "[-4,0]") + "}", 4),
                 {"is not a pair of non-negative integers"});
  ExpectRejected(Raw("{" + Tensor("w", "F32", "[1]", "[0,\"4\"]") + "}", 4),
                 {"is not a pair of non-negative integers"});
  ExpectRejected(Raw("{" + Tensor("w", "F32", "[0]", "[4,0]") + "}", 4),
                 {"tensor 'w': data_offsets [4, 0] end before they begin"});
  ExpectRejected(
      Raw("{" + Tensor("w", "F32", "[1]", "[18446744073709551611,18446744073709551615]") + "}", 4),
      {"tensor 'w': data_offsets [18446744073709551611, 18446744073709551615] lie "
       "outside the data section of 4 bytes"});
  ExpectRejected(Raw("{" + Tensor("w", "F32", "[2,3]", "[0,20]") + "}", 20),
                 {"tensor 'w': float32 [2, 3] needs 24 bytes but data_offsets cover 20"});
}

TEST_CASE("safetensors: tensors must cover the data section exactly") {
  const std::string a = Tensor("a", "F32", "[2]", "[0,8]");
  ExpectRejected(Raw("{" + a + "," + Tensor("b", "F32", "[2]", "[4,12]") + "}", 12),
                 {"tensor 'b': data_offsets [4, 12] overlap tensor 'a' [0, 8]"});
  // Two names for the same bytes (an aliasing trick): an overlap too.
  ExpectRejected(Raw("{" + a + "," + Tensor("b", "F32", "[2]", "[0,8]") + "}", 8),
                 {"tensor 'b': data_offsets [0, 8] overlap tensor 'a' [0, 8]"});
  ExpectRejected(Raw("{" + a + "," + Tensor("b", "F32", "[2]", "[12,20]") + "}", 20),
                 {"tensor 'b': data_offsets [12, 20] leave a gap of 4 bytes before them"});
  ExpectRejected(Raw("{" + Tensor("a", "F32", "[2]", "[4,12]") + "}", 12),
                 {"tensor 'a': data_offsets [4, 12] leave a gap of 4 bytes"});
  ExpectRejected(Raw("{" + a + "}", 11),
                 {"3 trailing bytes after the last tensor (the tensors must cover the data "
                  "section exactly)"});
  ExpectRejected(Raw("{}", 1), {"1 trailing bytes after the last tensor"});
  // Listed in any order: checked sorted by offset.
  ExpectRejected(Raw("{" + Tensor("z", "F32", "[1]", "[8,12]") + "," +
                         Tensor("y", "F32", "[3]", "[0,12]") + "}",
                     12),
                 {"tensor 'z': data_offsets [8, 12] overlap tensor 'y' [0, 12]"});
}

TEST_CASE("safetensors: valid files, including the corners of the format") {
  const std::string path = vkt::TempPath("ok.safetensors");
  // Scalar, empty tensor, zero-length tensors at the same offset, metadata, space padding,
  // entries not in offset order.
  const std::string header =
      "{\"__metadata__\":{\"format\":\"pt\"}," + Tensor("s", "I64", "[]", "[4,12]") + "," +
      Tensor("e", "F16", "[0,3]", "[4,4]") + "," + Tensor("e2", "F32", "[2,0]", "[4,4]") + "," +
      Tensor("b", "BOOL", "[4]", "[0,4]") + "}      ";
  std::string bytes = Raw(header, 12);
  bytes[bytes.size() - 8] = 7;  // s = 7
  WriteBytes(path, bytes);
  msc_vk::SafetensorsFile f(path, "golden file");
  CHECK(f.Names() == std::vector<std::string>{"b", "e", "e2", "s"});
  int64_t s = 0;
  f.Read("s", DType::kInt64, {}, &s, sizeof(s));
  CHECK(s == 7);
  CHECK(f.ReadBytes("e").empty());
  CHECK(f.Entry("e").shape == msc_vk::Shape{0, 3});
  // Read's checks against what the model expects.
  const std::string where = "golden file '" + path + "': tensor 's'";
  vkt::ExpectError([&] { f.Read("s", DType::kInt32, {}, &s, 4); },
                   where + " has dtype I64 (int64), expected I32 (int32)");
  vkt::ExpectError([&] { f.Read("s", DType::kInt64, {1}, &s, 8); },
                   where + " has shape [], expected [1]");
  vkt::ExpectError([&] { f.Read("s", DType::kInt64, {}, &s, 4); },
                   where + " has 8 bytes, the destination 4");
  vkt::ExpectError(
      [&] { f.Entry("nope"); },
      "golden file '" + path + "' has no tensor 'nope' (it has 4 tensors: b, e, e2, s)");
  std::remove(path.c_str());

  // A zero-length header is not a JSON object.
  WriteBytes(path, U64LE(0) + std::string());
  vkt::ExpectError([&] { msc_vk::SafetensorsFile g(path); }, "does not start with '{'");
  std::remove(path.c_str());
}

TEST_CASE("safetensors: missing files, folders, and the writer's own checks") {
  const std::string path = vkt::TempPath("absent.safetensors");
  std::remove(path.c_str());
  vkt::ExpectError([&] { msc_vk::SafetensorsFile f(path, "golden inputs file"); },
                   "golden inputs file '" + path + "' not found or not readable");
  const std::string dir = vkt::TempPath("a_folder.safetensors");
  REQUIRE(mkdir(dir.c_str(), 0700) == 0);
  vkt::ExpectError([&] { msc_vk::SafetensorsFile f(dir, "weights file"); },
                   "weights file '" + dir + "' is not a regular file");
  rmdir(dir.c_str());
  vkt::ExpectError(
      [&] {
        msc_vk::WriteSafetensors(path,
                                 {{"a", DType::kUInt8, {1}, {1}}, {"a", DType::kUInt8, {1}, {2}}});
      },
      "tensor name 'a' is reserved or repeated");
  std::remove(path.c_str());
}
