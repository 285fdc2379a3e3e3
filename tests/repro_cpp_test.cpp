// repro.cpp: escaping of case text into C++, and the short generated programs themselves, built
// with their own CMakeLists.txt (one configure for all) and run against tsrepro's own verdicts.

#include <sys/wait.h>

#include <csignal>
#include <map>

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
#include "repro/module_source.h"
#include "runner/exec/evaluate.h"
#include "runner/import/import.h"
#include "tests/support/cases.h"
#include "tests/support/expectations.h"
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

using testing::settings_for;

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

// The text of `const char* const <name> = ...;` in the generated source.
std::string literal_source(const std::string& source, const std::string& name) {
  const size_t begin = source.find("const char* const " + name + " =");
  if (begin == std::string::npos) return "";
  const size_t first = source.find('\n', begin) + 1;  // after the declaration and its comment
  const size_t end = source.find(";\n", first);
  return source.substr(first, end - first);
}

// The model is Repro's forward as source (kForward), or the IR (kGraph) where source cannot say it.
TEST(ReproCppSource, EmbedsTheGraphAsOneEscapedLiteralPerLine) {
  const std::string attack = attack_string("/tmp/" + kAttackMarker);
  Case c;
  c.graph = graph_with_string_constant(attack);
  c.values = std::vector<c10::IValue>{torch::ones({2})};
  c.inputs = {spec_from_value("x", c.values->front())};
  ReproSettings s = settings_for("eager", "exception", attack);
  s.command_line = "tsrepro minify " + attack;
  s.failure.run.backend_options = {{"k\"ey", attack}};
  const std::string source = repro_cpp_source(c, s);

  const std::string literal = literal_source(source, "kForward");
  std::vector<bool> lifted(c.inputs.size(), false);
  EXPECT_EQ(decode_literals(literal), module_form(*c.graph, lifted, *c.values).printed_forward) << source;
  static const std::regex one_literal_per_line(R"(^    "([^"\\]|\\.)*"$)");
  std::istringstream lines(literal);
  for (std::string line; std::getline(lines, line);) EXPECT_TRUE(std::regex_match(line, one_literal_per_line)) << line;

  // Outside comments the attack never closes a literal: its quotes are escaped wherever it is.
  EXPECT_EQ(code_lines(source).find("\"); system(\""), std::string::npos);
  EXPECT_FALSE(has_trigraph(source));
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

TEST(ReproCppSource, UsesTheRunnersComparisonNotACopyOfItsOwn) {
  Case c = testing::example_case("small_graph");
  const auto files = reproducer_files(c, settings_for("inject:accuracy@aten::relu", "accuracy"));
  ASSERT_TRUE(files.count("tsrepro_compare.h"));
  const std::string header = files.at("tsrepro_compare.h");
  // runner/exec/compare.cpp itself, bar its include of the header that now precedes it.
  std::ifstream source(testing::source_path("runner/exec/compare.cpp"));
  std::string implementation((std::istreambuf_iterator<char>(source)), std::istreambuf_iterator<char>());
  implementation.erase(implementation.find("#include \"tsrepro/compare.h\"\n"), 29);
  EXPECT_NE(header.find(implementation), std::string::npos);
  EXPECT_NE(header.find("CompareResult compare_outputs("), std::string::npos);
  // A failure that is not about values needs no comparison.
  EXPECT_FALSE(reproducer_files(c, settings_for("inject:segfault@aten::relu", "crash")).count("tsrepro_compare.h"));
}

// ---- The generated programs, built in one CMake project ------------------------------------------

struct ProgramCase {
  std::string name;
  Case c;
  ReproSettings settings;
  int expected_exit;          // 1 reproduces, 0 passes; 128 + signal for a crash left to happen
  size_t max_code_lines = 0;  // 0: not checked (a large graph)
};

Case relu_case() {
  Case c;
  c.graph = graph_from_ir("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  return (%y)\n", "relu");
  c.values = std::vector<c10::IValue>{torch::tensor({0.5f, -1.25f, 3.0f, -0.0f, NAN})};
  c.inputs = {spec_from_value("x", c.values->front())};
  return c;
}

// Several cases written to `dir`/<name>/ with their reproducers, each configured and built with
// its own CMakeLists.txt, two at a time.
class BuiltPrograms {
 public:
  explicit BuiltPrograms(std::vector<ProgramCase> cases) : cases_(std::move(cases)) {
    std::string dirs;
    for (const ProgramCase& p : cases_) {
      write_case(p.c, dir_ / p.name, false, reproducer_files(p.c, p.settings));
      dirs += dir_ / p.name + "\n";
    }
    std::ofstream(dir_ / "dirs.txt") << dirs;
    std::string torch_dir;
#ifdef TSREPRO_TORCH_DIR
    torch_dir = " -DTorch_DIR=" + shell_quoted(TSREPRO_TORCH_DIR);
#endif
    // -Werror on top of the -Wall -Wextra that each generated CMakeLists.txt asks for.
    const std::string build_one =
        "cmake -S \"$0\" -B \"$0/build\" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-Werror" + torch_dir +
        " > \"$0/build.log\" 2>&1 && cmake --build \"$0/build\" >> \"$0/build.log\" 2>&1"
        " || { cat \"$0/build.log\"; exit 1; }";
    const auto started = std::chrono::steady_clock::now();
    build_ = run_shell("xargs -P 2 -n 1 sh -c " + shell_quoted(build_one) + " < " + shell_quoted(dir_ / "dirs.txt"));
    std::printf("[ repro.cpp ] %zu programs: configure + build took %.1f s\n", cases_.size(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }

  const ShellResult& build_result() const { return build_; }
  const std::vector<ProgramCase>& cases() const { return cases_; }
  std::string source(const ProgramCase& p) const { return testing::read_text(dir_.path() / p.name / "repro.cpp"); }
  ShellResult run(const ProgramCase& p) const {
    return run_shell(shell_quoted((dir_.path() / p.name / "build" / "repro").string()));
  }
  std::string case_dir(const ProgramCase& p) const { return dir_ / p.name; }

 private:
  testing::TempDir dir_;  // removed with the cases and their builds
  std::vector<ProgramCase> cases_;
  ShellResult build_;
};

// One TEST, because ctest runs each TEST in a process of its own and this one costs a build.
TEST(ReproCppProgram, ShortProgramsBuildWarningFreeAndReproduceLikeTsrepro) {
  if (run_shell("cmake --version").exit_code != 0) GTEST_SKIP() << "cmake is not installed";
  testing::TempDir marker_dir;
  const std::string marker = marker_dir / kAttackMarker;
  Case chain = testing::example_case("chain100_scripted");
  chain.graph->registerOutput(chain.graph->insertConstant(attack_string(marker)));
  ReproSettings chain_crash = settings_for("inject:segfault@aten::relu", "crash", "crash:SIGSEGV");
  chain_crash.command_line = "tsrepro minify " + attack_string(marker);
  // --backward: the program compares the gradients too, and defines the op the error fault calls.
  ReproSettings wrong_gradient = settings_for("inject:backward-accuracy@aten::relu", "accuracy");
  ReproSettings backward_error = settings_for("inject:backward-error@aten::relu", "exception");
  wrong_gradient.failure.run.backward = backward_error.failure.run.backward = true;
  ReproSettings fake = settings_for("jit", "accuracy");
  fake.failure.run.fake_inputs = true;
  fake.failure.run.seed = 3;

  // The real backends' sections (nnc, ofi, ...) are built where MinifyCliRealBug minifies the first
  // real bug of each backend: its repro.cpp built with -Werror, exit 1. Each program here costs a configure and a
  // build.
  const BuiltPrograms programs({
      {"relu_accuracy", relu_case(), settings_for("inject:accuracy@aten::relu", "accuracy"), 1, 80},
      {"relu_exception", relu_case(), settings_for("inject:runtime-error@aten::relu", "exception"), 1, 80},
      {"relu_wrong_gradient", relu_case(), wrong_gradient, 1, 110},
      {"relu_backward_error", relu_case(), backward_error, 1, 110},
      {"chain_segfault", chain, chain_crash, 128 + SIGSEGV},
      {"healthy_nnc", testing::example_case("elementwise_chain_scripted"), settings_for("nnc", "accuracy"), 0},
      {"fake_inputs", testing::example_case("int_inputs_scripted"), fake, 0},
  });
  ASSERT_EQ(programs.build_result().exit_code, 0) << programs.build_result().output;
  for (const ProgramCase& p : programs.cases()) {
    SCOPED_TRACE(p.name);
    const ShellResult r = programs.run(p);
    EXPECT_EQ(r.exit_code, p.expected_exit) << r.output;
    if (p.expected_exit < 128) {  // tsrepro's own verdict, in process, agrees (it cannot crash here)
      EvalRequest request;
      request.graph_ir = graph_to_ir(*p.c.graph);
      request.specs = p.c.inputs;
      request.run = p.settings.failure.run;
      if (!p.settings.failure.run.fake_inputs) request.inputs_path = programs.case_dir(p) + "/inputs.pt";
      const Verdict verdict = Evaluator().evaluate(request, [](Phase) {});
      EXPECT_EQ(status_name(verdict.status) == p.settings.failure.status_text(), r.exit_code == 1) << verdict.message;
    }
    if (p.settings.failure.status == Status::Accuracy) {
      EXPECT_NE(r.output.find(p.expected_exit == 1 ? "verdict: accuracy" : "verdict: pass"), std::string::npos)
          << r.output;
    }
    if (p.max_code_lines) {
      EXPECT_LE(testing::repro_cpp_code_lines(programs.source(p)), p.max_code_lines) << programs.source(p);
    }
  }
  // The graph's string constant holds `"); system("touch <marker>"); ("`: it must stay data.
  EXPECT_FALSE(fs::exists(marker)) << "a string constant of the graph ran as code";
}

}  // namespace
}  // namespace tsrepro
