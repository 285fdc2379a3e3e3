// tsrepro: minify failing TorchScript graphs and write reproducers. This file only parses flags;
// the commands live in commands.cpp and the libraries.

#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <torch/version.h>

#include "cli/commands.h"
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
  cmd.add_flag("--equal-nan", compare.equal_nan, "NaN equals NaN");
  cmd.add_flag("!--no-exact-dtype", compare.exact_dtype, "allow the backend's outputs to differ in dtype");
  cmd.add_flag("--ignore-non-fp", compare.ignore_non_fp, "compare floating-point outputs only");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tsrepro: shrink a failing TorchScript graph and write a reproducer", "tsrepro"};
  app.require_subcommand(1);
  int verbosity = 0;
  app.add_flag("-v,--verbose", verbosity, "more log output on stderr (-vv for debug); or TSREPRO_LOG=info|debug");
  app.set_version_flag("--version", std::string("tsrepro ") + TSREPRO_VERSION + " (libtorch " + TORCH_VERSION + ")");

  tsrepro::ImportOptions import_options;
  std::string import_output;
  auto* import_cmd = app.add_subcommand("import", "turn a saved TorchScript module or an IR file plus inputs into a case directory");
  import_cmd->add_option("source", import_options.source, "MODEL.pt (torch.jit.save) or GRAPH.ir (TorchScript IR text)")
      ->required();
  auto* inputs_opt = import_cmd->add_option("--inputs", import_options.inputs_path,
                                            "INPUTS.pt: torch.save of a list or tuple of the forward arguments");
  import_cmd->add_option("--input-spec", import_options.input_spec,
                         "fake-shaped inputs only, e.g. \"1x3x8x8:float32,4:int64[0,10),int=3\"")
      ->excludes(inputs_opt);
  import_cmd->add_option("-o,--output", import_output, "the case directory to create")->required();
  import_cmd->add_option("--method", import_options.method, "the module method to import")->capture_default_str();

  tsrepro::cli::RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "run a case under a backend and report whether, and how, it fails");
  run_cmd->add_option("case", run.case_dir, "case directory (from tsrepro import)")->required();
  run_cmd->add_option("--backend", run.backend, "tested backend: eager, jit, nnc, ofi, inject:<fault>@<op>")->required();
  run_cmd->add_option("--ref", run.ref, "reference backend")->capture_default_str();
  run_cmd->add_option("--backend-opt", run.backend_opts, "backend option key=value (repeatable)");
  run_cmd->add_option("--device", run.device, "cpu or cuda")->capture_default_str();
  run_cmd->add_option("--timeout", run.timeout, "seconds before a run counts as hung")->capture_default_str();
  run_cmd->add_flag("--fake-inputs", run.fake_inputs, "use seeded fake inputs of the recorded shapes, not inputs.pt");
  run_cmd->add_option("--seed", run.seed, "seed of the fake inputs")->capture_default_str();
  run_cmd->add_flag("--backward", run.backward, "also compare input gradients of a scalar loss");
  run_cmd->add_flag("--explain-backend", run.explain_backend, "print the optimized graph the backend executed");
  run_cmd->add_flag("--json", run.json, "print the verdict as one JSON object");
  add_compare_flags(*run_cmd, run.compare);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  set_up_logging(verbosity);

  try {
    if (*import_cmd) return tsrepro::cli::import_command(import_options, import_output);
    if (*run_cmd) return tsrepro::cli::run_command(run);
  } catch (const tsrepro::UserError& e) {
    std::cerr << "tsrepro: error: " << e.what() << "\n";
    return 2;
  } catch (const c10::Error& e) {
    std::cerr << "tsrepro: error: " << e.what_without_backtrace() << "\n";
    return 2;
  }
  return 2;
}
