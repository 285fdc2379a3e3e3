// repro.cpp: escaping of case text into C++, and the generated program itself, built once with
// its own CMakeLists.txt and run against tsrepro's in-process verdicts.

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>
#include <torch/script.h>

#include "repro/cpp_literal.h"
#include "runner/evaluate.h"
#include "runner/import.h"
#include "tests/support/cases.h"
#include "tsrepro/case.h"
#include "tsrepro/writer.h"

namespace tsrepro {
namespace {

namespace fs = std::filesystem;
using testing::model_path;
using testing::run_shell;
using testing::shell_quoted;
using testing::ShellResult;

// A string constant that would run a command if it leaked into the program as code, with the
// other things escaping must survive: backslashes, a newline, a comment end, trigraphs, a control
// byte, and a \x escape followed by hex digits.
const std::string kAttackMarker = "tsrepro-pwned";
std::string attack_string(const std::string& marker_path) {
  return "\"); system(\"touch " + marker_path + "\"); (\" \\ \n */ /* ?\?/ ?\?= \x01 \\x41BC end\\";
}

// ---- A decoder for the literals the writer produces, to check that they mean the input ---------

// Decodes the adjacent string literals in `source` (escapes: \\ \" \n \t \? and \ooo). Anything
// between literals other than whitespace is an error.
std::optional<std::string> decode_literals(const std::string& source) {
  std::string value;
  size_t i = 0;
  while (i < source.size()) {
    if (std::isspace(static_cast<unsigned char>(source[i]))) {
      ++i;
      continue;
    }
    if (source[i] != '"') return std::nullopt;
    for (++i; i < source.size() && source[i] != '"'; ++i) {
      const char c = source[i];
      if (c == '\n' || static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
        return std::nullopt;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (++i >= source.size()) return std::nullopt;
      const char e = source[i];
      if (e == 'n')
        value += '\n';
      else if (e == 't')
        value += '\t';
      else if (e == '\\' || e == '"' || e == '?')
        value += e;
      else if (e >= '0' && e <= '7' && i + 2 < source.size()) {
        value += static_cast<char>(std::stoi(source.substr(i, 3), nullptr, 8));
        i += 2;
      } else
        return std::nullopt;
    }
    if (i >= source.size()) return std::nullopt;  // unterminated
    ++i;
  }
  return value;
}

bool has_trigraph(const std::string& text) {
  static const std::regex trigraph(R"(\?\?[=/'()!<>\-])");
  return std::regex_search(text, trigraph);
}

TEST(CppLiteral, EscapesQuotesBackslashesControlBytesAndTrigraphs) {
  EXPECT_EQ(cpp_string_literal("a\"b\\c\n\t"), R"("a\"b\\c\n\t")");
  // Octal escapes always have three digits, so a digit after one stays a digit.
  EXPECT_EQ(cpp_string_literal(std::string("\x01") + "9"), R"("\0019")");
  EXPECT_EQ(cpp_string_literal("\xc3\xa9"), R"("\303\251")");
  EXPECT_EQ(cpp_string_literal("?\?/ ?\?\?"), R"("?\?/ ?\?\?")");
  EXPECT_EQ(cpp_string_literal(std::string(1, '\0')), R"("\000")");
}

TEST(CppLiteral, RandomBytesRoundTripThroughLineLiterals) {
  std::mt19937 random(7);
  const std::string alphabet = std::string("ab?\"\\\n\t\r*/x019") + '\0' + "\x7f\xff";
  for (int trial = 0; trial < 200; ++trial) {
    std::string text;
    const size_t length = random() % 60;
    for (size_t i = 0; i < length; ++i) text += alphabet[random() % alphabet.size()];
    const std::string source = cpp_string_lines(text, "    ", 7);
    EXPECT_EQ(decode_literals(source), text) << source;
    EXPECT_FALSE(has_trigraph(source)) << source;
  }
  EXPECT_EQ(cpp_string_lines("", "  "), "\"\"");
  EXPECT_EQ(cpp_string_lines("a\nb\n", "  "), "\"a\\n\"\n  \"b\\n\"");
}

TEST(CppLiteral, CommentTextCannotEndTheCommentOrTheLine) {
  const std::string text = cpp_comment_text("a\nb */ c /* ?\?/ \\\r\x01\xff");
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_EQ(text.find('\\'), std::string::npos);
  EXPECT_EQ(text.find("*/"), std::string::npos);
  EXPECT_EQ(text.find("/*"), std::string::npos);
  EXPECT_EQ(text.find("??"), std::string::npos);
  for (char c : text) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << static_cast<int>(c);
}

TEST(CppLiteral, DoublesRoundTripExactly) {
  for (double value : {0.0, -0.0, 1.0, -1.2, 0.1, 1e-300, 3.4028234663852886e38, 2.0 / 3.0, 1e21}) {
    const std::string literal = cpp_double_literal(value);
    EXPECT_EQ(std::strtod(literal.c_str(), nullptr), value) << literal;
    EXPECT_NE(literal.find_first_of(".e"), std::string::npos) << literal;
  }
  EXPECT_EQ(cpp_double_literal(std::numeric_limits<double>::infinity()), "std::numeric_limits<double>::infinity()");
}

// ---- The generated source ----------------------------------------------------------------------

std::shared_ptr<torch::jit::Graph> graph_with_string_constant(const std::string& text) {
  auto graph = std::make_shared<torch::jit::Graph>();
  torch::jit::Value* x = graph->addInput("x");
  x->setType(c10::TensorType::get());
  graph->registerOutput(graph->insert(c10::aten::relu, {x}));
  graph->registerOutput(graph->insertConstant(text));
  return graph;
}

ReproSettings hostile_settings(const std::string& attack) {
  ReproSettings s;
  s.run.backend = "eager";
  s.run.backend_options = {{"k\"ey", attack}};
  s.expected_kind = "exception";
  s.expected_signature = attack;
  s.command_line = "tsrepro minify " + attack;
  return s;
}

// The source without its whole-line comments.
std::string code_lines(const std::string& source) {
  std::istringstream lines(source);
  std::string code;
  for (std::string line; std::getline(lines, line);) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || line.compare(start, 2, "//") != 0) code += line + "\n";
  }
  return code;
}

// The text of `const char* const kGraphIr = ...;` in the generated source.
std::string graph_literal_source(const std::string& source) {
  const std::string start = "const char* const kGraphIr =\n";
  const size_t begin = source.find(start);
  if (begin == std::string::npos) return "";
  const size_t end = source.find(";\n", begin);
  return source.substr(begin + start.size(), end - begin - start.size());
}

// The initializer of a Settings member: `  <declaration> = <initializer>;`.
std::string setting_source(const std::string& source, const std::string& declaration) {
  const size_t begin = source.find("  " + declaration + " = ");
  if (begin == std::string::npos) return "<missing>";
  const size_t start = begin + declaration.size() + 5;
  return source.substr(start, source.find(";\n", start) - start);
}

TEST(ReproCppSource, EmbedsTheGraphAsOneEscapedLiteralPerLine) {
  const std::string attack = attack_string("/tmp/" + kAttackMarker);
  Case c;
  c.graph = graph_with_string_constant(attack);
  c.inputs = {spec_from_value("x", torch::ones({2}))};
  const std::string source = repro_cpp_source(c, hostile_settings(attack));

  const std::string literal = graph_literal_source(source);
  EXPECT_EQ(decode_literals(literal), graph_to_ir(*c.graph)) << literal;
  static const std::regex one_literal_per_line(R"(^    "([^"\\]|\\.)*"$)");
  std::istringstream lines(literal);
  for (std::string line; std::getline(lines, line);) EXPECT_TRUE(std::regex_match(line, one_literal_per_line)) << line;

  // Outside comments the attack never closes a literal: its quotes are escaped wherever it is.
  EXPECT_EQ(code_lines(source).find("\"); system(\""), std::string::npos);
  EXPECT_FALSE(has_trigraph(source));
  EXPECT_EQ(decode_literals(setting_source(source, "std::string expected_signature")), attack);
  // The header is comments only, each a single line: nothing of the command line becomes code.
  const std::string header = source.substr(0, source.find("\n#include"));
  std::istringstream header_lines(header);
  for (std::string line; std::getline(header_lines, line);) {
    EXPECT_EQ(line.rfind("//", 0), 0u) << line;
    EXPECT_EQ(line.find('\\'), std::string::npos) << line;
  }
  EXPECT_NE(header.find("tsrepro " TSREPRO_VERSION), std::string::npos);
  EXPECT_NE(header.find("libtorch "), std::string::npos);
}

TEST(ReproCppSource, WritesFakeInputSpecsFromTheCase) {
  Case c;
  c.graph = graph_with_string_constant("s");
  InputSpec x = spec_from_value("x", torch::ones({2, 3}).t());  // not contiguous, but dense
  x.min = -2.5;
  x.max = 4;
  c.inputs = {x};
  InputSpec n = spec_from_value("n", c10::IValue(int64_t{-7}));
  c.inputs.push_back(n);
  ReproSettings s;
  s.run.backend = "nnc";
  s.run.fake_inputs = true;
  s.run.seed = 5;
  const std::string source = repro_cpp_source(c, s);
  EXPECT_NE(source.find(R"(tensor_input("x", at::kFloat, {3, 2}, {1, 3}, -2.5, 4.0))"), std::string::npos) << source;
  EXPECT_NE(source.find(R"(scalar_input("n", int64_t{-7}))"), std::string::npos);
  EXPECT_NE(source.find("bool fake_inputs = true;"), std::string::npos);
  EXPECT_NE(source.find("uint64_t seed = 5;"), std::string::npos);
}

// ---- The generated program, built once ---------------------------------------------------------

// The value printed on the repro's "<key>: " line.
std::string reported(const std::string& output, const std::string& key) {
  std::smatch match;
  const std::regex line("(^|\n)" + key + ": ([^\n]*)");
  return std::regex_search(output, match, line) ? match[2].str() : "<no " + key + " line>";
}

// The chain100 example plus a string output holding the attack, recorded as crashing under
// inject:segfault@aten::relu, written to a fresh directory and built there with its own
// CMakeLists.txt. One build serves every check: --backend and the other flags override the
// recorded settings at run time.
class BuiltRepro {
 public:
  BuiltRepro() {
    case_dir_ = dir_ / "case";
    marker_ = dir_ / kAttackMarker;
    const std::string model = model_path("chain100_scripted");
    case_ = import_case({model + ".pt", "forward", model + ".inputs.pt", ""});
    case_.graph->registerOutput(case_.graph->insertConstant(attack_string(marker_)));

    ReproSettings s;
    s.run.backend = "inject:segfault@aten::relu";
    s.expected_kind = "crash";
    s.expected_signature = "crash:SIGSEGV";
    s.run.timeout_seconds = 60;
    s.command_line = "tsrepro minify " + attack_string(marker_);
    write_case(case_, case_dir_, false,
               {{"repro.cpp", repro_cpp_source(case_, s)}, {"CMakeLists.txt", repro_cmake_source()}});
    build();
  }

  const ShellResult& build_result() const { return build_; }
  const std::string& case_dir() const { return case_dir_; }
  const std::string& marker() const { return marker_; }
  std::string path(const std::string& name) const { return dir_ / name; }

  ShellResult run(const std::string& arguments) const {
    return run_shell(shell_quoted(case_dir_ + "/build/repro") + " " + arguments);
  }

  // tsrepro's own verdict on the same case, in process (only for backends that cannot crash).
  // `fake_seed`: fake inputs made from the specs with that seed instead of inputs.pt.
  Verdict tsrepro_verdict(const std::string& backend, bool backward = false,
                          std::optional<uint64_t> fake_seed = std::nullopt) const {
    EvalRequest request;
    request.graph_ir = graph_to_ir(*case_.graph);
    request.specs = case_.inputs;
    request.inputs_path = fake_seed ? "" : case_dir_ + "/inputs.pt";
    request.run.seed = fake_seed.value_or(0);
    request.run.backend = backend;
    request.run.backward = backward;
    return Evaluator().evaluate(request, [](const std::string&) {});
  }

 private:
  void build() {
    std::string torch_dir;
#ifdef TSREPRO_TORCH_DIR
    torch_dir = " -DTorch_DIR=" + shell_quoted(TSREPRO_TORCH_DIR);
#endif
    // -Werror on top of the -Wall -Wextra that the generated CMakeLists.txt asks for.
    const auto started = std::chrono::steady_clock::now();
    build_ = run_shell("cmake -S " + shell_quoted(case_dir_) + " -B " + shell_quoted(case_dir_ + "/build") +
                       " -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-Werror" + torch_dir + " && cmake --build " +
                       shell_quoted(case_dir_ + "/build"));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("[ repro.cpp ] configure + build took %.1f s\n", seconds);
  }

  testing::TempDir dir_;  // removed with the case and its build
  std::string case_dir_, marker_;
  Case case_;
  ShellResult build_;
};

void expect_recorded_crash_reproduces(const BuiltRepro& repro) {
  SCOPED_TRACE("the recorded failure, from the directory compiled in");
  const ShellResult run = repro.run("");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_EQ(reported(run.output, "verdict"), "crash (run)") << run.output;
  EXPECT_EQ(reported(run.output, "signature"), "crash:SIGSEGV");
  EXPECT_EQ(reported(run.output, "result"), "reproduced");
  EXPECT_NE(run.output.find("inputs from " + repro.case_dir() + "/inputs.pt"), std::string::npos) << run.output;
}

void expect_tsrepro_verdict(const BuiltRepro& repro, const std::string& backend, bool backward) {
  SCOPED_TRACE("--backend " + backend + (backward ? " --backward" : ""));
  const Verdict expected = repro.tsrepro_verdict(backend, backward);
  const ShellResult run = repro.run(shell_quoted(repro.case_dir()) + " --backend " + shell_quoted(backend) +
                                    (backward ? " --backward" : ""));
  const std::string phase = expected.phase.empty() ? "" : " (" + expected.phase + ")";
  EXPECT_EQ(reported(run.output, "verdict"), status_name(expected.status) + phase) << run.output;
  EXPECT_EQ(reported(run.output, "signature"), expected.signature);
  EXPECT_EQ(run.exit_code, 0) << "only a SIGSEGV crash reproduces\n" << run.output;
}

void expect_nnc_fuses_on_the_cpu(const BuiltRepro& repro) {
  SCOPED_TRACE("--backend nnc --show-graph");
  const ShellResult run = repro.run("--backend nnc --show-graph");
  EXPECT_EQ(reported(run.output, "verdict"), "pass") << run.output;
  EXPECT_NE(run.output.find("prim::TensorExprGroup"), std::string::npos) << run.output;
}

void expect_other_signals_and_hangs_do_not_count(const BuiltRepro& repro) {
  SCOPED_TRACE("abort and hang");
  const ShellResult abort = repro.run("--backend inject:abort@aten::relu");
  EXPECT_EQ(reported(abort.output, "signature"), "crash:SIGABRT") << abort.output;
  EXPECT_EQ(abort.exit_code, 0);

  const auto started = std::chrono::steady_clock::now();
  const ShellResult hang = repro.run("--backend inject:hang@aten::relu --timeout 1");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 30);
  EXPECT_EQ(reported(hang.output, "verdict"), "timeout (run)") << hang.output;
  EXPECT_EQ(reported(hang.output, "signature"), "timeout");
  EXPECT_EQ(hang.exit_code, 0);
}

void expect_fake_inputs_like_tsrepro(const BuiltRepro& repro) {
  SCOPED_TRACE("--fake-inputs --seed 3");
  const ShellResult crash = repro.run("--fake-inputs --seed 3");
  EXPECT_EQ(crash.exit_code, 1) << crash.output;
  EXPECT_NE(crash.output.find("fake inputs (seed 3)"), std::string::npos) << crash.output;

  // The size of the injected error depends on every input value: equal sizes, equal inputs.
  const Verdict expected = repro.tsrepro_verdict("inject:accuracy@aten::relu", false, /*fake_seed=*/3);
  ASSERT_EQ(expected.status, Status::Accuracy) << expected.message;
  char max_abs[64];
  std::snprintf(max_abs, sizeof(max_abs), "max_abs %.6g:", expected.outputs.at(0).max_abs);
  const ShellResult run = repro.run("--fake-inputs --seed 3 --backend inject:accuracy@aten::relu");
  EXPECT_NE(reported(run.output, "message").find(max_abs), std::string::npos) << max_abs << "\n" << run.output;
}

void expect_bad_flags_refused(const BuiltRepro& repro) {
  SCOPED_TRACE("bad command lines");
  EXPECT_EQ(repro.run("--no-such-flag").exit_code, 2);
  EXPECT_EQ(repro.run("--backend nope").exit_code, 2);
  EXPECT_EQ(repro.run("--backend nnc --backend-opt inline=maybe").exit_code, 2);
  EXPECT_EQ(repro.run(shell_quoted(repro.path("missing"))).exit_code, 2);
}

// One TEST, because ctest runs each TEST in a process of its own and this one costs a build.
TEST(ReproCppProgram, BuildsWarningFreeAndReproducesLikeTsrepro) {
  if (run_shell("cmake --version").exit_code != 0) GTEST_SKIP() << "cmake is not installed";
  const BuiltRepro repro;
  ASSERT_EQ(repro.build_result().exit_code, 0) << repro.build_result().output;

  expect_recorded_crash_reproduces(repro);
  for (const std::string backend :
       {"eager", "jit", "nnc", "ofi", "inject:runtime-error@aten::relu", "inject:compile-error@aten::relu+aten::tanh",
        "inject:accuracy@aten::relu", "inject:runtime-error@aten::relu+aten::abs"})
    expect_tsrepro_verdict(repro, backend, /*backward=*/false);
  for (const std::string backend : {"eager", "jit", "inject:accuracy@aten::tanh"})
    expect_tsrepro_verdict(repro, backend, /*backward=*/true);
  expect_nnc_fuses_on_the_cpu(repro);
  expect_other_signals_and_hangs_do_not_count(repro);
  expect_fake_inputs_like_tsrepro(repro);
  expect_bad_flags_refused(repro);

  // The graph's string constant holds `"); system("touch <marker>"); ("`: it must stay data.
  EXPECT_FALSE(fs::exists(repro.marker())) << "a string constant of the graph ran as code";
}

}  // namespace
}  // namespace tsrepro
