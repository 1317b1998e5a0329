// Python string/number text algorithms used by the template engine (internal header).
//
// Strings are UTF-8; functions that count or index characters work on Unicode code points, as
// Python's str does. Case mapping covers ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic
// (1:1 mappings plus ß -> SS); Greek final sigma and other special casings are not handled.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace msc::tmpl::pystr {

// UTF-8 <-> code points (invalid bytes decode as U+FFFD).
std::u32string Decode(const std::string& s);
std::string Encode(const std::u32string& s);
void AppendCodePoint(std::string& out, char32_t cp);
size_t Length(const std::string& s);  // number of code points
// Code point boundaries: offsets of each code point plus s.size() at the end.
std::vector<size_t> Boundaries(const std::string& s);

std::string Repr(const std::string& s);            // Python repr() of a str, e.g. 'it\'s' -> "it's"
std::string FloatRepr(double d);                   // Python repr() of a float: 1.0, 0.1, 1e-05, inf
void AppendFloatRepr(std::string& out, double d);  // out += FloatRepr(d)
// Tells AppendFloatRepr that repr(d) is `repr` (a caller that knows it, e.g. round() from the
// decimal text it rounded to); kept in a small per-thread cache of recent reprs.
void NoteFloatRepr(double d, std::string_view repr);
bool IsPrintable(char32_t cp);  // approximation of str.isprintable for one char

bool IsSpace(char32_t cp);  // Python str.isspace for one character
// Approximations of str.isalpha / str.isdigit / regex \w for one character: exact for ASCII and
// Latin-1; letters of the common alphabetic scripts and CJK count, symbols and marks do not.
bool IsAlphaChar(char32_t cp);
bool IsDigitChar(char32_t cp);
bool IsWordChar(char32_t cp);
bool IsCased(char32_t cp);              // has an upper/lower case form (approximation, see below)
bool IsLowerStr(const std::string& s);  // str.islower()
bool IsUpperStr(const std::string& s);  // str.isupper()
std::string Upper(const std::string& s);
std::string Lower(const std::string& s);
std::string Capitalize(const std::string& s);
std::string Title(const std::string& s);       // str.title()
std::string JinjaTitle(const std::string& s);  // Jinja's |title filter
std::string SwapCase(const std::string& s);

// strip family; chars == nullptr means whitespace.
std::string Strip(const std::string& s, const std::string* chars, bool left, bool right);
std::vector<std::string> Split(const std::string& s, const std::string* sep, int64_t maxsplit);
std::vector<std::string> RSplit(const std::string& s, const std::string* sep, int64_t maxsplit);
std::vector<std::string> SplitLines(const std::string& s, bool keepends = false);
std::string Replace(const std::string& s, const std::string& old, const std::string& repl,
                    int64_t count);
int64_t Count(const std::string& s, const std::string& sub);
int64_t Find(const std::string& s, const std::string& sub, bool reverse);  // in code points, -1

// Python int(str, base) / float(str); return false when Python would raise ValueError.
bool ParseInt(const std::string& s, int base, int64_t* out);
bool ParseFloat(const std::string& s, double* out);

}  // namespace msc::tmpl::pystr
