// tsrepro: minify failing TorchScript graphs and write reproducers. This file only dispatches:
// each subcommand's flags and body live in cli/<name>_command.cpp (cli/command.h).

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <torch/version.h>

#include "cli/command.h"
#include "process/child_process.h"
#include "runner/case/extension_libraries.h"
#include "runner/worker/zygote.h"
#include "tsrepro/error.h"

namespace {

// Every error ends the run as the last line of stderr, in the one form error.h gives it.
void print_error(const std::string& message) {
  std::cerr << "tsrepro: error: " << tsrepro::printable_error_line(message) << std::endl;
}

void set_up_logging(int verbosity) {
  auto logger = spdlog::stderr_color_mt("tsrepro");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  spdlog::set_level(spdlog::level::warn);
  if (const char* level = std::getenv("TSREPRO_LOG")) spdlog::set_level(spdlog::level::from_str(level));
  if (verbosity == 1) spdlog::set_level(spdlog::level::info);
  if (verbosity >= 2) spdlog::set_level(spdlog::level::debug);
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

// Parses the command line, then runs the one subcommand given. The subcommands (cli/command.h)
// own their flags; this adds the global ones, maps errors to exit codes and one-line messages,
// and sets up what every command needs first: custom operator libraries, the workers' zygote
// and logging.
int run_cli(int argc, char** argv) {
  CLI::App app{"tsrepro: shrink a failing TorchScript graph and write a reproducer", "tsrepro"};
  app.require_subcommand(1);
  int verbosity = 0;
  app.add_flag("-v,--verbose", verbosity, "more log output on stderr (-vv for debug); or TSREPRO_LOG=info|debug");
  app.set_version_flag("--version", std::string("tsrepro ") + TSREPRO_VERSION + " (libtorch " + TORCH_VERSION + ")");

  tsrepro::cli::Invocation invocation;
  const auto commands = tsrepro::cli::all_commands();
  std::vector<CLI::App*> subcommands;
  std::string command_names;
  for (const auto& command : commands) {
    subcommands.push_back(command->add_to(app, invocation));
    command_names += (command_names.empty() ? "" : ", ") + subcommands.back()->get_name();
  }

  // A first word that is no option and no subcommand: name it (CLI11 would only say that a
  // subcommand is required).
  const bool known_word = std::any_of(subcommands.begin(), subcommands.end(),
                                      [&](const CLI::App* sub) { return argc > 1 && sub->get_name() == argv[1]; });
  if (argc > 1 && argv[1][0] != '-' && !known_word) {
    print_error(std::string("unknown command '") + argv[1] + "' (commands: " + command_names + "; see tsrepro --help)");
    return 2;
  }
  tsrepro::cli::Command* chosen = nullptr;
  try {
    app.parse(argc, argv);
    for (size_t i = 0; i < commands.size(); ++i)
      if (subcommands[i]->parsed()) chosen = commands[i].get();
    chosen->check_flags();
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    print_error(std::string(e.what()) + " (see tsrepro " +
                (app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name() + " ") + "--help)");
    return 2;
  }
  invocation.command_line = command_line_of(argc, argv);
  // Custom operators first: loading a module needs them, and the zygote's workers inherit them.
  // Those a case records come with it.
  try {
    tsrepro::load_extension_libraries(invocation.libraries);
    const std::string case_dir = chosen->case_dir();
    if (!case_dir.empty())
      for (const std::string& path : tsrepro::recorded_library_paths(case_dir)) {
        try {
          tsrepro::load_extension_libraries({path});
        } catch (const tsrepro::UserError& e) {
          throw tsrepro::UserError(std::string(e.what()) + " (" + case_dir + "/case.json records it)");
        }
      }
  } catch (const tsrepro::UserError& e) {
    print_error(e.what());
    return 2;
  }
  // Commands that run candidates in workers fork them from a zygote, started now: one thread,
  // nothing run on torch yet (see runner/worker/zygote.h). Where it cannot start they exec tsrepro-runner.
  if (chosen->runs_workers()) tsrepro::zygote::start();
  // After the zygote's fork, which keeps the default handlers (its workers die with it).
  tsrepro::end_children_on_termination_signals();
  // Reaped on every way out below, after the command's workers stopped with it.
  struct ZygoteStop {
    ~ZygoteStop() { tsrepro::zygote::stop(); }
  } zygote_stop;
  set_up_logging(verbosity);

  try {
    return chosen->run(invocation);
  } catch (const tsrepro::UserError& e) {
    print_error(e.what());
    return 2;
  } catch (const c10::Error& e) {
    print_error(tsrepro::one_line_error(e.what_without_backtrace()));
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    print_error(e.path1().string() + ": " + e.code().message());
    return 2;
  } catch (const std::exception& e) {
    // Anything else (a torch::jit::ErrorReport from libtorch's front end...) is a bug of ours or
    // of libtorch, never a reason for std::terminate: say what it was, in one line.
    print_error(tsrepro::one_line_error(e.what()));
    return 2;
  } catch (...) {
    print_error("an exception that is not a std::exception");
    return 2;
  }
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
