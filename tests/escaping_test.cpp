// Issue 31, point 3: one escaping rule per output language, and a property test over all of
// them. Hostile strings (newlines, quotes, backslashes, NULs, """, R"(, $(...), backticks, ESC,
// bytes that are not UTF-8) go through each rule, and each result is read back by the real
// reader of its language: libtorch's IR parser, Python's compiler, g++ (compiled and run, so
// the values are compared too), bash.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "repro/cpp_literal.h"
#include "repro/html_text.h"
#include "repro/markdown.h"
#include "runner/formats/python_literal.h"
#include "repro/shell_literal.h"
#include "runner/formats/ir_comment_text.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tsrepro/case.h"
#include "tsrepro/error.h"

namespace tsrepro_test {
namespace {

using namespace tsrepro;

// Strings made of the pieces that end literals and comments early in some language, plus
// random bytes. Fixed seed: a failure reproduces.
std::vector<std::string> hostile_strings(size_t count) {
  static const std::vector<std::string> pieces = {
      "\n",     "\r",       "\r\n",     "\"",           "'",          "\\", std::string(1, '\0'),
      "\"\"\"", "'''",      "R\"(",     ")\"",          "$(touch x)", "`",  "```",
      "*/",     "/*",       "//",       "?\?=",         "?\?/",       "#",  "\x1b[31m",
      "\xff",   "\xfe\xff", "\xc3\xa9", "\xe2\x80\xae", "\xc3",       "\t", "%",
      "{",      "}",        "<script>", "&amp;",        "|",          " ",  "a",
      "0",      "\\n",      "\\x00",    "(node 3)",     "-->",        "](", "!["};
  std::mt19937 random(31);
  std::vector<std::string> out = {"", "\n", std::string(1, '\0'), "\"\"\"", "R\"(x)\"", "\xff"};
  while (out.size() < count) {
    std::string s;
    for (size_t n = 1 + random() % 8; n > 0; --n)
      s += random() % 5 ? pieces[random() % pieces.size()] : std::string(1, static_cast<char>(random() % 256));
    out.push_back(s);
  }
  return out;
}

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    out.push_back(digits[static_cast<unsigned char>(c) >> 4]);
    out.push_back(digits[static_cast<unsigned char>(c) & 15]);
  }
  return out;
}

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80                 ? 1
                     : c >= 0xc2 && c < 0xe0  ? 2
                     : c >= 0xe0 && c < 0xf0  ? 3
                     : c >= 0xf0 && c <= 0xf4 ? 4
                                              : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    i += n;
  }
  return true;
}

const std::vector<std::string>& strings() {
  static const std::vector<std::string> all = hostile_strings(400);
  return all;
}

TEST(Escaping, IrCommentsKeepTheGraphParsingAndTheirNodeNumbers) {
  std::string ir = "graph(%x : Tensor):\n";
  for (size_t i = 0; i < strings().size(); ++i)
    ir += "  %v" + std::to_string(i) + " : Tensor = aten::relu(" + (i ? "%v" + std::to_string(i - 1) : "%x") + ") # " +
          ir_comment_text(strings()[i]) + " (node " + std::to_string(i) + ")\n";
  ir += "  return (%v" + std::to_string(strings().size() - 1) + ")\n";
  const auto graph = graph_from_ir(ir, "escaping test");
  EXPECT_EQ(count_compute_nodes(*graph), strings().size());
  for (const std::string& s : strings()) EXPECT_EQ(ir_comment_text(s).find('\n'), std::string::npos);
}

TEST(Escaping, PythonLiteralsAndCommentsCompileToTheSameValues) {
  TempDir tmp;
  std::string program = "values = [\n";
  std::string expected = "expected = [\n";
  for (const std::string& s : strings()) {
    program += "    " + python_string_literal(s) + ",  # " + python_comment_text(s) + "\n";
    expected += "    " + std::string(valid_utf8(s) ? "bytes.fromhex('" + hex(s) + "')" : "None") + ",\n";
  }
  program += "]\n" + expected + "]\n" +
             "assert len(values) == len(expected), (len(values), len(expected))\n"
             "for i, (v, e) in enumerate(zip(values, expected)):\n"
             "    assert e is None or v.encode('utf-8') == e, (i, v, e)\n"
             "print('ok', len(values))\n";
  write_text(tmp.path() / "literals.py", program);
  const Result r = run_cmd(kPython, {(tmp.path() / "literals.py").string()});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("ok " + std::to_string(strings().size())), std::string::npos) << r.describe();
}

TEST(Escaping, CppLiteralsAndCommentsCompileToTheSameBytes) {
  TempDir tmp;
  std::string program =
      "#include <cstdio>\n#include <cstring>\n#include <string>\n"
      "struct Entry { std::string value; const char* hex; };\n"
      "static const Entry entries[] = {\n";
  for (const std::string& s : strings()) {
    program += "    {std::string(" + cpp_string_literal(s) + ", " + std::to_string(s.size()) + "), \"" + hex(s) +
               "\"},  // " + cpp_comment_text(s) + "\n";
    program += "    {std::string(" + cpp_string_lines(s, "     ") + ", " + std::to_string(s.size()) + "), \"" + hex(s) +
               "\"},\n";
  }
  program +=
      "};\n"
      "int main() {\n"
      "  int bad = 0, n = 0;\n"
      "  for (const Entry& e : entries) {\n"
      "    std::string h;\n"
      "    for (unsigned char c : e.value) { char b[3]; std::snprintf(b, 3, \"%02x\", c); h += b; }\n"
      "    if (h != e.hex) { std::printf(\"entry %d: %s != %s\\n\", n, h.c_str(), e.hex); ++bad; }\n"
      "    ++n;\n"
      "  }\n"
      "  std::printf(\"ok %d\\n\", n);\n"
      "  return bad != 0;\n"
      "}\n";
  write_text(tmp.path() / "literals.cpp", program);
  const std::string binary = (tmp.path() / "literals").string();
  const Result compiled = run_cmd("/usr/bin/g++", {"-std=c++17", "-Wall", "-Werror", "-Wno-trigraphs", "-o", binary,
                                                   (tmp.path() / "literals.cpp").string()});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.describe();
  const Result ran = run_cmd(binary, {});
  EXPECT_EQ(ran.exit_code, 0) << ran.describe();
  EXPECT_NE(ran.out.find("ok " + std::to_string(2 * strings().size())), std::string::npos) << ran.describe();
}

TEST(Escaping, ShellWordsReadBackAsTheSameText) {
  // A shell word cannot hold a NUL: the strings are taken up to their first.
  std::string script;
  std::vector<std::string> words;
  for (const std::string& s : strings()) {
    words.push_back(s.substr(0, s.find('\0')));
    script += "printf '%s\\036' " + tsrepro::shell_quoted(words.back()) + "\n";  // not the tests' own
  }
  TempDir tmp;
  write_text(tmp.path() / "words.sh", script);
  std::filesystem::remove(std::filesystem::current_path() / "x");
  const Result r = run_cmd("/bin/bash", {(tmp.path() / "words.sh").string()});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  std::string expected;
  for (const std::string& w : words) expected += w + "\036";
  EXPECT_EQ(r.out, expected);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::current_path() / "x")) << "a $(touch x) ran";
}

TEST(Escaping, MarkdownAndHtmlKeepTextInert) {
  for (const std::string& s : strings()) {
    const std::string span = markdown_code_span(s);
    EXPECT_EQ(span.find('\n'), std::string::npos) << span;
    const std::string block = markdown_code_block(s);
    const std::string fence = block.substr(0, block.find_first_not_of('`'));
    EXPECT_GE(fence.size(), 3u);
    // The fence closes the block only at its end: no line inside starts with it.
    EXPECT_EQ(block.find("\n" + fence, 0), block.rfind("\n" + fence)) << block;
    const std::string text = markdown_text(s);
    EXPECT_EQ(text.find('\n'), std::string::npos) << text;
    // No link or image: every "](" has its bracket escaped.
    for (size_t at = text.find("]("); at != std::string::npos; at = text.find("](", at + 1))
      EXPECT_TRUE(at > 0 && text[at - 1] == '\\') << text;
    const std::string html = html_text(s);
    EXPECT_EQ(html.find_first_of("<>\"'"), std::string::npos) << html;
  }
}

TEST(Escaping, ErrorLinesAreOneLineOfPrintableTextBounded) {
  for (const std::string& s : strings()) {
    const std::string line = printable_error_line(s);
    for (const char c : line) EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) << hex(line);
    EXPECT_TRUE(valid_utf8(line)) << hex(line);
  }
  const std::string long_line = printable_error_line("--backend " + std::string(100000, 'a') + ": unknown backend");
  EXPECT_LT(long_line.size(), 1100u);
  EXPECT_EQ(long_line.rfind("--backend aaa", 0), 0u);
  EXPECT_NE(long_line.find(": unknown backend"), std::string::npos);
  EXPECT_NE(long_line.find("bytes cut"), std::string::npos);
}

}  // namespace
}  // namespace tsrepro_test
