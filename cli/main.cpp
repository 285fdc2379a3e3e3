// tsrepro: minify failing TorchScript graphs and write reproducers. This file only parses flags;
// the commands live in commands.cpp and the libraries.

#include <cstdio>
#include <filesystem>
#include <iostream>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <torch/version.h>

#include "cli/commands.h"
#include "runner/extension_libraries.h"
#include "runner/zygote.h"
#include "tsrepro/backend.h"
#include "tsrepro/error.h"

namespace {

void set_up_logging(int verbosity) {
  auto logger = spdlog::stderr_color_mt("tsrepro");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  spdlog::set_level(spdlog::level::warn);
  if (const char* level = std::getenv("TSREPRO_LOG")) spdlog::set_level(spdlog::level::from_str(level));
  if (verbosity == 1) spdlog::set_level(spdlog::level::info);
  if (verbosity >= 2) spdlog::set_level(spdlog::level::debug);
}

void add_compare_flags(CLI::App& cmd, tsrepro::CompareOptions& compare) {
  cmd.add_option("--tol", compare.tol, "tolerance of the same()-style comparison")->capture_default_str();
  cmd.add_flag("--cos", compare.cos_similarity, "compare by cosine similarity (>= 0.99)");
  cmd.add_flag("--equal-nan,!--no-equal-nan", compare.equal_nan,
               "NaN equals NaN (default, as PyTorch's minifier compares)");
  cmd.add_flag("!--no-fp64", compare.use_fp64,
               "judge by allclose alone: no fp64 reference run excuses a result (same_two_models_use_fp64=False)");
  cmd.add_flag("!--no-exact-dtype", compare.exact_dtype, "allow the backend's outputs to differ in dtype");
  cmd.add_flag("--ignore-non-fp", compare.ignore_non_fp, "compare floating-point outputs only");
}

struct EvaluationFlags {
  CLI::Option* case_dir;
  CLI::Option* backend;
};

// The flags `run` and `minify` share (which of them are required is the caller's: minify
// --list-passes needs neither the case nor --backend).
EvaluationFlags add_evaluation_flags(CLI::App& cmd, tsrepro::cli::EvaluationCliOptions& o,
                                     const std::string& timeout_help, const std::string& fake_inputs_help) {
  EvaluationFlags flags;
  flags.case_dir = cmd.add_option("case", o.case_dir, "case directory (from tsrepro import)");
  flags.backend = cmd.add_option("--backend", o.run.backend, "tested backend: " + tsrepro::known_backends_text());
  cmd.add_option("--ref", o.run.ref, "reference backend")->capture_default_str();
  cmd.add_option("--backend-opt", o.backend_opts, "backend option key=value (repeatable)");
  cmd.add_option("--device", o.run.device, "cpu or cuda")->capture_default_str();
  cmd.add_option("--timeout", o.run.timeout_seconds, timeout_help)->capture_default_str()->check(CLI::PositiveNumber);
  cmd.add_flag("--fake-inputs", o.run.fake_inputs, fake_inputs_help);
  cmd.add_option("--seed", o.run.seed, "seed of the fake inputs")->capture_default_str();
  cmd.add_flag("--backward", o.run.backward, "also compare input gradients of a scalar loss");
  add_compare_flags(cmd, o.run.compare);
  return flags;
}

// The command line as typed, shell-quoted where needed: it goes into the reproducers' headers.
std::string command_line_of(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool plain =
        !arg.empty() &&
        arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") ==
            std::string::npos;
    std::string quoted = "'";
    for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += (i ? " " : "") + (plain ? arg : quoted + "'");
  }
  return line;
}

}  // namespace

// --load-library on every command that loads or runs graphs (repeatable; TSREPRO_LOAD_LIBRARY too).
void add_load_library_flag(CLI::App& cmd, std::vector<std::string>& libraries) {
  cmd.add_option("--load-library", libraries,
                 "a library of custom operators (torch.ops.load_library), e.g. torchvision's _C.so; repeatable, "
                 "or TSREPRO_LOAD_LIBRARY=PATH[:PATH...]");
}

int run_cli(int argc, char** argv) {
  CLI::App app{"tsrepro: shrink a failing TorchScript graph and write a reproducer", "tsrepro"};
  std::vector<std::string> libraries;
  app.require_subcommand(1);
  int verbosity = 0;
  app.add_flag("-v,--verbose", verbosity, "more log output on stderr (-vv for debug); or TSREPRO_LOG=info|debug");
  app.set_version_flag("--version", std::string("tsrepro ") + TSREPRO_VERSION + " (libtorch " + TORCH_VERSION + ")");

  tsrepro::ImportOptions import_options;
  std::string import_output;
  auto* import_cmd =
      app.add_subcommand("import", "turn a saved TorchScript module or an IR file plus inputs into a case directory");
  import_cmd->add_option("source", import_options.source, "MODEL.pt (torch.jit.save) or GRAPH.ir (TorchScript IR text)")
      ->required();
  auto* inputs_opt = import_cmd->add_option("--inputs", import_options.inputs_path,
                                            "INPUTS.pt: torch.save of a list or tuple of the forward arguments");
  import_cmd
      ->add_option("--input-spec", import_options.input_spec,
                   "fake-shaped inputs only, e.g. \"1x3x8x8:float32,4:int64[0,10),int=3\"")
      ->excludes(inputs_opt);
  import_cmd->add_option("-o,--output", import_output, "the case directory to create")->required();
  import_cmd->add_option(
      "--origins", import_options.origins_path,
      "ORIGINS.json: the nodes' source lines as recorded where the graph ran (the capture writes it)");
  import_cmd->add_option("--method", import_options.method, "the module method to import")->capture_default_str();
  add_load_library_flag(*import_cmd, libraries);

  tsrepro::cli::AfterCliOptions after;
  auto* after_cmd = app.add_subcommand(
      "after", "run a case once through the TSREPRO_AFTER / TSREPRO_LEVEL workflow (used by the Python shim)");
  after_cmd->add_option("case", after.case_dir, "case directory with real inputs")->required();
  after_cmd->add_option("--backend", after.backend, "the backend the program uses")->required();
  after_cmd->add_option("--backend-opt", after.backend_opts, "backend option key=value (repeatable)");
  after_cmd->add_option("--id", after.id, "number in the subjects' names (graph_<id>)")->check(CLI::PositiveNumber);
  add_load_library_flag(*after_cmd, libraries);

  tsrepro::cli::RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "run a case under a backend and report whether, and how, it fails");
  const EvaluationFlags run_flags =
      add_evaluation_flags(*run_cmd, run, "seconds before a run counts as hung",
                           "use seeded fake inputs of the recorded shapes, not inputs.pt");
  run_flags.case_dir->required();
  run_flags.backend->required();
  add_load_library_flag(*run_cmd, libraries);
  run_cmd->add_flag("--explain-backend", run.explain_backend, "print the optimized graph the backend executed");
  run_cmd->add_flag("--json", run.json, "print the verdict as one JSON object");
  run_cmd->add_flag("--save-repro", run.save_repro,
                    "on failure, record it in CASE/case.json and write repro.py, repro.cpp, CMakeLists.txt into CASE");

  tsrepro::cli::ExplainOptions explain;
  auto* explain_cmd = app.add_subcommand(
      "explain",
      "list which autograd node (by sequence number) differentiates each node of a case, and the backward order");
  explain_cmd->add_option("case", explain.case_dir, "a case directory")->required();
  explain_cmd->add_option(
      "--backend", explain.backend,
      "also say which of this backend's differentiable subgraphs (and fusion groups) covers each node");
  explain_cmd->add_option("--backend-opt", explain.backend_opts, "backend option key=value (repeatable)");
  explain_cmd->add_flag("--json", explain.json, "print the tables as one JSON object");
  explain_cmd->add_flag("--fake-inputs", explain.fake_inputs, "use seeded fake inputs of the recorded shapes");
  explain_cmd->add_option("--seed", explain.seed, "seed of the fake inputs");
  add_load_library_flag(*explain_cmd, libraries);

  tsrepro::cli::MinifyCliOptions minify;
  bool list_passes = false;
  auto* minify_cmd =
      app.add_subcommand("minify", "shrink a failing case to a 1-minimal graph and write repro.py / repro.cpp");
  // case, --backend and -o are checked below: --list-passes needs none of them.
  add_evaluation_flags(*minify_cmd, minify, "seconds before a candidate counts as hung",
                       "start from seeded fake inputs of the recorded shapes");
  minify_cmd->add_option("-o,--output", minify.output_dir, "output directory: checkpoints/, minified/, summary.json");
  auto* accuracy_flag = minify_cmd->add_flag("--accuracy", minify.accuracy,
                                             "keep accuracy failures only; exceptions and crashes are not interesting");
  auto* check_str_opt = minify_cmd->add_option(
      "--check-str", minify.check_str, "a failure is interesting when this regex matches its signature or message");
  auto* test_opt = minify_cmd->add_option("--test", minify.test_command,
                                          "interesting when CMD CANDIDATE_CASE_DIR exits 0 (llvm-reduce style)");
  accuracy_flag->excludes(check_str_opt)->excludes(test_opt);
  check_str_opt->excludes(test_opt);
  minify_cmd->add_option("-j,--jobs", minify.jobs, "candidates run in parallel (worker processes)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  minify_cmd->add_option("--passes", minify.passes, "comma-separated passes to run (default: all)")->delimiter(',');
  minify_cmd->add_flag("--resume", minify.resume, "continue from the smallest checkpoint in the output directory");
  minify_cmd->add_flag("--skip-sanity", minify.skip_sanity, "do not run the original case first");
  minify_cmd->add_flag(
      "--offload", minify.offload,
      "keep the reference values the cutting passes feed in on disk (a temporary directory), not in memory");
  minify_cmd->add_flag("--json", minify.json, "print the summary as one JSON object");
  minify_cmd->add_flag("--list-passes", list_passes, "list the reduction passes and exit");
  add_load_library_flag(*minify_cmd, libraries);

  tsrepro::cli::ReportOptions report;
  auto* report_cmd = app.add_subcommand(
      "report", "write ISSUE.md for a recorded failure: title, environment, expected vs observed, the short repro.py");
  report_cmd->add_option("dir", report.dir, "a case directory with a recorded failure, or a minify output directory")
      ->required();
  report_cmd->add_flag(
      "--archive", report.archive,
      "also write DIR/tsrepro-report.tar.gz: ISSUE.md, repro.py, repro.cpp, CMakeLists.txt and the case");
  add_load_library_flag(*report_cmd, libraries);

  // A first word that is no option and no subcommand: name it (CLI11 would only say that a
  // subcommand is required).
  const auto is_subcommand = [&app](const std::string& word) {
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
      if (sub->get_name() == word) return true;
    return false;
  };
  const auto command_names = [](CLI::App& parent) {
    std::string names;
    for (const CLI::App* sub : parent.get_subcommands([](CLI::App*) { return true; }))
      names += (names.empty() ? "" : ", ") + sub->get_name();
    return names;
  };
  if (argc > 1 && argv[1][0] != '-' && !is_subcommand(argv[1])) {
    std::cerr << "tsrepro: error: unknown command '" << argv[1] << "' (commands: " << command_names(app)
              << "; see tsrepro --help)\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
    if (*minify_cmd && !list_passes) {
      if (minify.case_dir.empty()) throw CLI::RequiredError("case");
      if (minify.run.backend.empty()) throw CLI::RequiredError("--backend");
      if (minify.output_dir.empty()) throw CLI::RequiredError("--output");
    }
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "tsrepro: error: " << e.what() << " (see tsrepro "
              << (app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name() + " ") << "--help)\n";
    return 2;
  }
  minify.command_line = run.command_line = command_line_of(argc, argv);
  // Custom operators first: loading a module needs them, and the zygote's workers inherit them.
  try {
    tsrepro::load_extension_libraries(libraries);
  } catch (const tsrepro::UserError& e) {
    std::cerr << "tsrepro: error: " << e.what() << "\n";
    return 2;
  }
  // Commands that run candidates in workers fork them from a zygote, started now: one thread,
  // nothing run on torch yet (see runner/zygote.h). Where it cannot start they exec tsrepro-runner.
  if (*import_cmd || *run_cmd || *report_cmd || (*minify_cmd && !list_passes)) tsrepro::zygote::start();
  set_up_logging(verbosity);

  try {
    if (*import_cmd) return tsrepro::cli::import_command(import_options, import_output);
    if (*run_cmd) return tsrepro::cli::run_command(run);
    if (*after_cmd) return tsrepro::cli::after_command(after);
    if (*report_cmd) return tsrepro::cli::report_command(report);
    if (*explain_cmd) return tsrepro::cli::explain_command(explain);
    if (*minify_cmd) return list_passes ? tsrepro::cli::list_passes_command() : tsrepro::cli::minify_command(minify);
  } catch (const tsrepro::UserError& e) {
    std::cerr << "tsrepro: error: " << e.what() << "\n";
    return 2;
  } catch (const c10::Error& e) {
    std::cerr << "tsrepro: error: " << tsrepro::one_line_error(e.what_without_backtrace()) << "\n";
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    std::cerr << "tsrepro: error: " << e.path1().string() << ": " << e.code().message() << "\n";
    return 2;
  } catch (const std::exception& e) {
    // Anything else (a torch::jit::ErrorReport from libtorch's front end...) is a bug of ours or
    // of libtorch, never a reason for std::terminate: say what it was, in one line.
    std::cerr << "tsrepro: error: " << tsrepro::one_line_error(e.what()) << "\n";
    return 2;
  } catch (...) {
    std::cerr << "tsrepro: error: an exception that is not a std::exception\n";
    return 2;
  }
  return 2;
}

int main(int argc, char** argv) {
  const int exit_code = run_cli(argc, argv);
  // Everything this program writes is written and closed by now (files are renamed into place
  // before a command returns). What is left are libtorch's static destructors, which deregister
  // every operator: a fifth of a second for nothing. Flush and leave without them.
  std::cout.flush();
  std::cerr.flush();
  spdlog::shutdown();
  std::fflush(nullptr);
  ::_exit(exit_code);
}
