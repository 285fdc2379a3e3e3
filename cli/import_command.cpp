// `tsrepro import SOURCE --inputs INPUTS.pt -o CASE`: a saved module or IR file plus inputs
// becomes a case directory, checked by one run in a worker before it is written.

#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "runner/import/import.h"
#include "runner/worker/worker_client.h"
#include "tsrepro/error.h"

namespace fs = std::filesystem;

namespace tsrepro::cli {
namespace {

int import_command(const ImportOptions& options, const std::string& output_dir, double timeout_seconds) {
  if (fs::exists(output_dir)) throw UserError(output_dir + ": already exists (choose another -o or remove it)");
  Case c = import_case(options);
  RunnerProcess runner;
  check_inputs_run(c, options.inputs_path.empty() ? "--input-spec" : options.inputs_path, runner, timeout_seconds);
  write_case(c, output_dir);
  size_t lifted = 0;
  for (const InputSpec& spec : c.inputs) lifted += spec.lifted;
  std::cout << "wrote " << output_dir << ": " << count_compute_nodes(*c.graph) << " compute nodes, " << c.inputs.size()
            << " inputs (" << lifted << " lifted constants), " << (c.values ? "real" : "fake-shaped")
            << " input values\n";
  return 0;
}

class ImportCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app, Invocation& invocation) override {
    auto* cmd =
        app.add_subcommand("import", "turn a saved TorchScript module or an IR file plus inputs into a case directory");
    cmd->add_option("source", options_.source, "MODEL.pt (torch.jit.save) or GRAPH.ir (TorchScript IR text)")
        ->required();
    auto* inputs = cmd->add_option("--inputs", options_.inputs_path,
                                   "INPUTS.pt: torch.save of a list or tuple of the forward arguments");
    cmd->add_option("--input-spec", options_.input_spec,
                    "fake-shaped inputs only, e.g. \"1x3x8x8:float32,4:int64[0,10),int=3\"")
        ->excludes(inputs);
    cmd->add_option("-o,--output", output_, "the case directory to create")->required();
    cmd->add_option("--origins", options_.origins_path,
                    "ORIGINS.json: the nodes' source lines as recorded where the graph ran (the capture writes it)");
    cmd->add_option("--method", options_.method, "the module method to import")->capture_default_str();
    cmd->add_option("--timeout", timeout_seconds_, "seconds the check run may take (an endless loop is refused)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    add_load_library_flag(*cmd, invocation.libraries);
    return cmd;
  }
  bool runs_workers() const override { return true; }
  int run(const Invocation&) override { return import_command(options_, output_, timeout_seconds_); }

 private:
  ImportOptions options_;
  std::string output_;
  double timeout_seconds_ = RunSpec{}.timeout_seconds;
};

}  // namespace

std::unique_ptr<Command> make_import_command() { return std::make_unique<ImportCommand>(); }

}  // namespace tsrepro::cli
