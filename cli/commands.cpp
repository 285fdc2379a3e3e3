// `tsrepro import` and `tsrepro run`.

#include <filesystem>
#include <iostream>

#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "runner/worker_client.h"
#include "tsrepro/backend.h"
#include "tsrepro/error.h"
#include "tsrepro/writer.h"

namespace fs = std::filesystem;

namespace tsrepro::cli {

RunSpec EvaluationCliOptions::validated_run_spec() const {
  RunSpec spec = run;
  spec.backend_options = parse_backend_options(backend_opts);
  spec.validate();
  return spec;
}

namespace {

int exit_code_for(const Verdict& v) {
  if (v.status == Status::Pass) return 0;
  if (v.status == Status::Invalid) return 2;
  return 1;
}

void print_verdict(const Verdict& v, const RunOptions& o) {
  std::cout << "verdict:   " << status_name(v.status)
            << (v.phase.empty() || v.status == Status::Pass ? "" : " (" + v.phase + ")") << "\n";
  if (!v.signature.empty()) std::cout << "signature: " << v.signature << "\n";
  if (!v.message.empty()) std::cout << "message:   " << v.message << "\n";
  if (!v.outputs.empty()) {
    std::cout << "outputs:\n";
    for (const OutputDiff& d : v.outputs)
      std::cout << "  " << d.path << "  " << d.dtype << "  max_abs " << d.max_abs << "  max_rel " << d.max_rel << "  "
                << (d.ok ? "ok" : "FAIL") << (d.reason.empty() ? "" : "  " + d.reason) << "\n";
  }
  std::cout << "ran:       " << o.run.ref << " vs " << o.run.backend << " on " << o.run.device << ", " << v.seconds
            << " s\n";
  if (v.status == Status::Invalid) std::cout << "The reference itself fails on this case: nothing to compare.\n";
  if (o.explain_backend && !v.backend_graph.empty())
    std::cout << "\nexecuted graph (" << o.run.backend << "):\n" << v.backend_graph;
}

}  // namespace

int import_command(const ImportOptions& options, const std::string& output_dir) {
  if (fs::exists(output_dir)) throw UserError(output_dir + ": already exists (choose another -o or remove it)");
  Case c = import_case(options);
  RunnerProcess runner;
  check_inputs_run(c, options.inputs_path.empty() ? "--input-spec" : options.inputs_path, runner);
  write_case(c, output_dir);
  size_t lifted = 0;
  for (const InputSpec& spec : c.inputs) lifted += spec.lifted;
  std::cout << "wrote " << output_dir << ": " << count_compute_nodes(*c.graph) << " compute nodes, " << c.inputs.size()
            << " inputs (" << lifted << " lifted constants), " << (c.values ? "real" : "fake-shaped")
            << " input values\n";
  return 0;
}

namespace {

// --save-repro: the failure goes into case.json and the reproducers beside it, all rewritten
// atomically (the case directory is replaced as a whole).
std::string save_repro(Case c, const Verdict& verdict, const RunSpec& run, const RunOptions& o) {
  c.expected = ExpectedFailure{run.ref, run.backend, nlohmann::json(run.backend_options), status_name(verdict.status),
                               verdict.signature};
  ReproSettings settings;
  settings.run = run;
  settings.run.fake_inputs = run.fake_inputs || !c.values;
  settings.expected_kind = status_name(verdict.status);
  settings.expected_signature = verdict.signature;
  settings.command_line = o.command_line;
  write_case(c, o.case_dir, /*replace=*/true, reproducer_files(c, settings));
  return (fs::path(o.case_dir) / "repro.py").string();
}

}  // namespace

int run_command(const RunOptions& o) {
  const Case c = load_case(o.case_dir);
  EvalRequest request;
  request.run = o.validated_run_spec();  // unknown backends and options fail here, before any worker
  request.graph_ir = graph_to_ir(*c.graph);
  request.specs = c.inputs;
  if (c.values && !o.run.fake_inputs) request.inputs_path = (fs::path(o.case_dir) / "inputs.pt").string();
  request.explain = o.explain_backend;

  RunnerProcess runner;
  const Verdict verdict = runner.evaluate(request);
  std::string repro_py;
  if (o.save_repro && verdict.failed()) repro_py = save_repro(c, verdict, request.run, o);
  if (o.json) {
    nlohmann::json j = verdict_to_json(verdict);
    j["case"] = o.case_dir;
    j["backend"] = o.run.backend;
    j["ref"] = o.run.ref;
    if (!repro_py.empty()) j["repro_py"] = repro_py;
    std::cout << j.dump() << "\n";
  } else {
    print_verdict(verdict, o);
    if (!repro_py.empty()) std::cout << "repro:     /usr/bin/python3 " << repro_py << "\n";
  }
  return exit_code_for(verdict);
}

}  // namespace tsrepro::cli
