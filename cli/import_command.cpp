// `tsrepro import SOURCE --inputs INPUTS.pt -o CASE`: a saved module or IR file plus inputs
// becomes a case directory, checked by one run in a worker before it is written.

#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "runner/import/import.h"
#include "runner/import/verify.h"
#include "runner/worker/worker_client.h"
#include "tsrepro/backend.h"
#include "tsrepro/error.h"

namespace fs = std::filesystem;

namespace tsrepro::cli {
namespace {

// --verify: each backend's verdict on the model and on the case, a line each; false where they differ.
bool verify_against_model(const Case& c, const ImportOptions& options, const std::vector<std::string>& backends,
                          double timeout_seconds, RunnerProcess& runner) {
  RunSpec base;
  base.timeout_seconds = timeout_seconds;
  bool faithful = true;
  for (const FidelityCheck& check : verify_case_against_model(c, options.source, backends, base, runner)) {
    if (check.difference.empty()) {
      std::cout << "verify " << check.backend
                << (check.case_only ? ": the case's module form computes what the model computes; the case gives "
                                    : ": the case is judged as the model is: ")
                << status_name(check.model.status) << (check.model.signature.empty() ? "" : " " + check.model.signature)
                << "\n";
      continue;
    }
    std::cerr << printable_error_line("tsrepro import: " + options.source + ": --verify " + check.backend +
                                      ": import changed the model: " + check.difference)
              << "\n";
    faithful = false;
  }
  return faithful;
}

int import_command(const ImportOptions& options, const std::string& output_dir, double timeout_seconds,
                   const std::vector<std::string>& verify) {
  if (fs::exists(output_dir)) throw UserError(output_dir + ": already exists (choose another -o or remove it)");
  Case c = import_case(options);
  const bool from_module = c.provenance.value("source_kind", "") == "module";
  if (!verify.empty() && !from_module)
    throw UserError("--verify: " + options.source +
                    " is IR text: only a saved module (torch.jit.save) has public calls to judge it by");
  for (const std::string& backend : verify) make_backend(backend, {});  // unknown: UserError naming it
  RunnerProcess runner;
  const std::string inputs = options.inputs_path.empty() ? "--input-spec" : options.inputs_path;
  check_inputs_run(c, inputs, runner, timeout_seconds, from_module ? options.source : "");
  if (c.provenance.contains("reference_fails"))
    std::cout << "note: the model's own unoptimized run fails on " << inputs
              << " as the case does: " << c.provenance["reference_fails"].value("message", "") << "\n";
  if (!verify.empty() && !verify_against_model(c, options, verify, timeout_seconds, runner)) return 1;
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
    cmd->add_option("--verify", verify_,
                    "BACKEND[,BACKEND...]: judge the saved model through its public calls and the case under each "
                    "backend, and fail (exit 1, no case written) where the two differ")
        ->delimiter(',');
    add_load_library_flag(*cmd, invocation.libraries);
    return cmd;
  }
  bool runs_workers() const override { return true; }
  int run(const Invocation&) override { return import_command(options_, output_, timeout_seconds_, verify_); }

 private:
  ImportOptions options_;
  std::string output_;
  double timeout_seconds_ = RunSpec{}.timeout_seconds;
  std::vector<std::string> verify_;
};

}  // namespace

std::unique_ptr<Command> make_import_command() { return std::make_unique<ImportCommand>(); }

}  // namespace tsrepro::cli
