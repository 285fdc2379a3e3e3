// Judging one candidate: reference run, tested backend (compile, run, backward), comparison.

#include <chrono>
#include <cxxabi.h>
#include <filesystem>
#include <functional>
#include <optional>
#include <regex>

#include <torch/script.h>

#include "runner/exec/evaluate.h"

#include "runner/exec/accuracy_verdict.h"
#include "runner/exec/fp64_reference.h"
#include "runner/case/constant_inputs.h"
#include "runner/formats/torch_save_reader.h"
#include "runner/formats/torch_save_writer.h"
#include "runner/graph/saved_python_numbers.h"
#include "runner/graph/strict_fusion.h"
#include "runner/graph/written_inputs.h"
#include "tsrepro/error.h"
#include "tsrepro/foreign_error.h"

using nlohmann::json;

namespace tsrepro {
namespace {

// One value written as a 1-tuple (EvalRequest::input_files, write_torch_save), read by the
// project's one torch.save reader: mapped, so its tensors' pages are the file's.
c10::IValue read_pickled_value(const std::string& path) {
  const c10::IValue stored = read_torch_save(path);
  if (!stored.isTuple() || stored.toTupleRef().elements().size() != 1)
    throw UserError(path + ": expected one pickled value");
  return stored.toTupleRef().elements()[0];
}

struct ExceptionInfo {
  std::string type;
  std::string message;
};

std::string demangled(const char* name) {
  int status = 0;
  char* readable = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = status == 0 && readable ? readable : name;
  std::free(readable);
  return result;
}

// The interpreter wraps an op's error in a TorchScript traceback; the last "XError: ..." line
// of it is the error itself, and its type is the one Python would raise.
ExceptionInfo unwrap_interpreter_traceback(ExceptionInfo info) {
  if (info.message.find("The following operation failed in the TorchScript interpreter") == std::string::npos)
    return info;
  static const std::regex error_line("(^|\\n)([A-Za-z_.]*Error): ");
  std::smatch last;
  for (auto it = std::sregex_iterator(info.message.begin(), info.message.end(), error_line);
       it != std::sregex_iterator(); ++it)
    last = *it;
  if (last.empty()) return info;
  const auto start = static_cast<size_t>(last.position(0) + last.length(0));
  return {last[2].str(), info.message.substr(start)};
}

ExceptionInfo describe_current_exception() {
  try {
    throw;
  } catch (const ForeignError& e) {
    return {e.type(), e.what()};
  } catch (const c10::IndexError& e) {
    return unwrap_interpreter_traceback({"IndexError", e.what_without_backtrace()});
  } catch (const c10::ValueError& e) {
    return unwrap_interpreter_traceback({"ValueError", e.what_without_backtrace()});
  } catch (const c10::TypeError& e) {
    return unwrap_interpreter_traceback({"TypeError", e.what_without_backtrace()});
  } catch (const c10::NotImplementedError& e) {
    return unwrap_interpreter_traceback({"NotImplementedError", e.what_without_backtrace()});
  } catch (const c10::OutOfMemoryError& e) {
    return unwrap_interpreter_traceback({"OutOfMemoryError", e.what_without_backtrace()});
  } catch (const c10::Error& e) {
    return unwrap_interpreter_traceback({"RuntimeError", e.what_without_backtrace()});
  } catch (const std::exception& e) {
    return unwrap_interpreter_traceback({demangled(typeid(e).name()), e.what()});
  } catch (...) {
    return {"unknown", "an exception that is not a std::exception"};
  }
}

Verdict exception_verdict(Phase phase) {
  ExceptionInfo info = describe_current_exception();
  Verdict v;
  v.status = Status::Exception;
  v.phase = phase;
  v.signature = exception_signature(phase, info.type, info.message);
  v.message = info.type + ": " + info.message;
  return v;
}

Verdict invalid_verdict(const std::string& what, Phase phase) {
  ExceptionInfo info = describe_current_exception();
  Verdict v;
  v.status = Status::Invalid;
  v.phase = phase;
  v.message = what + ": " + info.type + ": " + info.message;
  return v;
}

Verdict invalid_message(const std::string& message) {
  Verdict v;
  v.status = Status::Invalid;
  v.phase = Phase::Reference;
  v.message = message;
  return v;
}

// prim::Uninitialized stands for "no value" in branches that raise; the interpreter passes it
// through, but a graph that returns one cannot be called from Python (toPyObject refuses it).
bool holds_uninitialized(const std::vector<c10::IValue>& values) {
  for (const c10::IValue& v : values) {
    if (v.tagKind() == "Uninitialized") return true;
    if (v.isTuple() && holds_uninitialized(v.toTupleRef().elements().vec())) return true;
    if (v.isList() && holds_uninitialized(v.toListRef().vec())) return true;
  }
  return false;
}

bool is_floating_tensor(const c10::IValue& v) { return v.isTensor() && v.toTensor().is_floating_point(); }

// How every run (reference, backend; prepare, run) gets the inputs.
struct InputPolicy {
  std::vector<bool> with_grad;  // leaves that require grad (--backward)
  std::vector<bool> written;    // inputs a node may write to (written_inputs.h): copied per run
};

// Fresh copies for every run where ops may mutate an input (the others are shared: written_inputs.h);
// in backward mode the inputs that get gradients become leaves that require grad.
std::vector<c10::IValue> fresh_inputs(const std::vector<c10::IValue>& inputs, const InputPolicy& policy) {
  return with_grad_leaves(fresh_copies(inputs, policy.written), policy.with_grad);
}

// Backpropagates the scalar loss of `outputs`; returns d loss / d input for every input
// (None for inputs without a gradient).
std::vector<c10::IValue> input_gradients(const std::vector<c10::IValue>& outputs,
                                         const std::vector<c10::IValue>& inputs) {
  auto loss = reduce_to_scalar_loss(c10::ivalue::Tuple::create(outputs));
  if (loss) loss->backward();
  std::vector<c10::IValue> grads;
  for (const c10::IValue& v : inputs) {
    if (is_floating_tensor(v) && v.toTensor().grad().defined())
      grads.push_back(v.toTensor().grad());
    else
      grads.push_back(c10::IValue());
  }
  return grads;
}

struct SideResult {
  std::vector<c10::IValue> outputs;
  std::vector<c10::IValue> grads;
};

SideResult run_prepared_reference(PreparedGraph& prepared, const std::vector<c10::IValue>& inputs,
                                  const InputPolicy& policy) {
  std::vector<c10::IValue> run_inputs = fresh_inputs(inputs, policy);
  SideResult result{prepared.run(run_inputs), {}};
  const bool backward = std::find(policy.with_grad.begin(), policy.with_grad.end(), true) != policy.with_grad.end();
  if (backward) result.grads = input_gradients(result.outputs, run_inputs);
  return result;
}

SideResult run_reference(Backend& backend, const BackendInput& input, const std::vector<c10::IValue>& inputs,
                         const InputPolicy& policy) {
  return run_prepared_reference(*backend.prepare(input, fresh_inputs(inputs, policy)), inputs, policy);
}

// An undefined tensor (an AOTInductor package that returned None where the graph has a tensor)
// is None: a wrong result the comparison judges, not an error of tsrepro's.
std::vector<c10::IValue> detached(const std::vector<c10::IValue>& values) {
  std::vector<c10::IValue> out;
  for (const c10::IValue& v : values) {
    if (!v.isTensor())
      out.push_back(v);
    else
      out.push_back(v.toTensor().defined() ? c10::IValue(v.toTensor().detach()) : c10::IValue());
  }
  return out;
}

// Outputs followed by gradients (paths kGradientPath + "<i>"), so one comparison covers both.
CompareResult compare_sides(const SideResult& ref, const SideResult& res, const SideResult* fp64,
                            const CompareOptions& options) {
  CompareResult forward =
      compare_outputs(detached(ref.outputs), detached(res.outputs), fp64 ? &fp64->outputs : nullptr, options);
  if (ref.grads.empty()) return forward;
  CompareResult grads =
      compare_outputs(ref.grads, res.grads, fp64 && !fp64->grads.empty() ? &fp64->grads : nullptr, options);
  for (OutputDiff d : grads.outputs) {
    d.path = kGradientPath + d.path;
    forward.outputs.push_back(d);
  }
  forward.same = forward.same && grads.same;
  return forward;
}

}  // namespace

Verdict verdict_for_current_exception(Phase phase) { return exception_verdict(phase); }

json request_to_json(const EvalRequest& r) {
  json specs = json::array();
  for (const InputSpec& s : r.specs) specs.push_back(spec_to_json(s));
  return {{"graph_ir", r.graph_ir},         {"specs", specs},
          {"inputs_path", r.inputs_path},   {"input_files", r.input_files},
          {"run", run_spec_to_json(r.run)}, {"explain", r.explain},
          {"module_path", r.module_path},   {"outputs_path", r.outputs_path}};
}

EvalRequest eval_request(const Case& c, const RunSpec& run, const std::string& case_dir) {
  EvalRequest request;
  request.graph_ir = graph_to_ir(*c.graph);
  request.specs = c.inputs;
  request.run = run;
  if (c.values && !run.fake_inputs && !case_dir.empty()) request.inputs_path = case_dir + "/inputs.pt";
  return request;
}

EvalRequest request_from_json(const json& j) {
  EvalRequest r;
  r.graph_ir = j.at("graph_ir").get<std::string>();
  for (const json& s : j.at("specs")) r.specs.push_back(spec_from_json(s, "request"));
  r.inputs_path = j.value("inputs_path", "");
  r.input_files = j.value("input_files", std::vector<std::string>{});
  r.run = run_spec_from_json(j.at("run"));
  r.explain = j.value("explain", false);
  r.module_path = j.value("module_path", "");
  r.outputs_path = j.value("outputs_path", "");
  return r;
}

c10::IValue Evaluator::read_input_file(const std::string& entry) {
  // input_file_element's "FILE#I", or a file of one value.
  const size_t hash = entry.rfind('#');
  const bool element = hash != std::string::npos && hash + 1 < entry.size() &&
                       entry.find_first_not_of("0123456789", hash + 1) == std::string::npos;
  if (!element) return read_pickled_value(entry);
  const std::string file = entry.substr(0, hash);
  auto archive = archives_.find(file);
  if (archive == archives_.end()) archive = archives_.emplace(file, read_input_values(file)).first;
  const size_t index = std::stoul(entry.substr(hash + 1));
  if (index >= archive->second.size())
    throw UserError(file + ": holds " + std::to_string(archive->second.size()) + " values, asked for number " +
                    std::to_string(index));
  return archive->second[index];
}

std::vector<c10::IValue> Evaluator::load_inputs(const EvalRequest& request) {
  if (!request.input_files.empty() && !request.run.fake_inputs) {
    // Content-addressed files: read the new ones; keep exactly the ones this request uses.
    std::map<std::string, c10::IValue> kept;
    std::vector<c10::IValue> values;
    for (const std::string& file : request.input_files) {
      auto known = values_by_file_.find(file);
      c10::IValue value = known != values_by_file_.end() ? known->second : read_input_file(file);
      kept.emplace(file, value);
      values.push_back(std::move(value));
    }
    values_by_file_ = std::move(kept);
    return values;
  }
  if (request.inputs_path.empty() || request.run.fake_inputs) return make_fake_inputs(request.specs, request.run.seed);
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto stamp = fs::last_write_time(request.inputs_path, ec).time_since_epoch().count();
  const std::string key = request.inputs_path + "@" + std::to_string(stamp);
  auto cached = inputs_by_path_.find(key);
  if (cached != inputs_by_path_.end()) return cached->second;
  std::vector<c10::IValue> values = read_input_values(request.inputs_path);
  if (inputs_by_path_.size() > 64) inputs_by_path_.clear();  // bounded: candidates come and go
  inputs_by_path_[key] = values;
  return values;
}

Verdict Evaluator::evaluate(const EvalRequest& request, const PhaseCallback& on_phase) {
  if (!request.module_path.empty()) return evaluate_module(request, load_inputs(request), on_phase);
  return evaluate_values(request, load_inputs(request), on_phase);
}

namespace {

// What one evaluation judges, the case's graph or the saved model: the inputs, how every run gets
// them, and how each side is made ready (compiled) on them.
struct Subject {
  std::vector<c10::IValue> inputs;
  InputPolicy policy;
  std::function<std::unique_ptr<PreparedGraph>(Backend&, const std::vector<c10::IValue>& sample)> prepare;
  // The model as the tested backend receives it, run uncompiled (Backend::run_received_model).
  std::function<std::optional<std::vector<c10::IValue>>(Backend&, const std::vector<c10::IValue>& sample)> received;
  // The reference in float64 (runner/exec/fp64_reference.h), or nullopt where there is none.
  std::function<std::optional<SideResult>(Backend& reference)> fp64;
  std::function<std::string()> describe;  // "this graph", "the saved model"
};

// Both sides' outputs for EvalRequest::outputs_path: a tuple of two tuples.
void write_outputs(const std::string& path, const SideResult* ref, const SideResult* res) {
  if (path.empty()) return;
  auto as_tuple = [](const SideResult* side) {
    return side ? c10::ivalue::Tuple::create(detached(side->outputs)) : c10::ivalue::Tuple::create({});
  };
  write_torch_save(path, c10::ivalue::Tuple::create({as_tuple(ref), as_tuple(res)}));
}

Verdict judge(const EvalRequest& request, Subject& subject, const PhaseCallback& on_phase) {
  // A graph that raised inside `with torch.no_grad()` left grad mode off (import inlines the with
  // statement's exit, not the interpreter's exit on a raise): every evaluation starts it on.
  const torch::AutoGradMode grad_mode_on(true);
  const auto started = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> compute_started;
  double compile_seconds = 0;  // the tested backend's prepare, once it ended (or raised)
  SideResult ref, res;
  bool ran_reference = false, ran_backend = false;
  auto finish = [&](Verdict v) {
    const auto now = std::chrono::steady_clock::now();
    v.seconds = std::chrono::duration<double>(now - started).count();
    if (compute_started) v.compute_seconds = std::chrono::duration<double>(now - *compute_started).count();
    v.compile_seconds = compile_seconds;
    write_outputs(request.outputs_path, ran_reference ? &ref : nullptr, ran_backend ? &res : nullptr);
    return v;
  };
  const std::vector<c10::IValue>& inputs = subject.inputs;
  const InputPolicy& policy = subject.policy;
  auto reference = make_backend(request.run.ref, {});
  auto tested = make_backend(request.run.backend, request.run.backend_options);

  on_phase(Phase::Reference);
  compute_started = std::chrono::steady_clock::now();
  // A reference that cannot even compile the graph (a constant the interpreter cannot hold, an
  // operator without a kernel) is the graph's fault; one that fails running may be the inputs'.
  std::unique_ptr<PreparedGraph> reference_prepared;
  try {
    reference_prepared = subject.prepare(*reference, fresh_inputs(inputs, policy));
  } catch (...) {
    return finish(invalid_verdict("the reference (" + request.run.ref + ") cannot compile " + subject.describe(),
                                  Phase::ReferenceCompile));
  }
  try {
    ref = run_prepared_reference(*reference_prepared, inputs, policy);
  } catch (...) {
    return finish(
        invalid_verdict("the reference (" + request.run.ref + ") fails on " + subject.describe(), Phase::Reference));
  }
  ran_reference = true;

  if (holds_uninitialized(ref.outputs))
    return finish(invalid_message("the reference (" + request.run.ref + ") returns an uninitialized value " +
                                  "(prim::Uninitialized, as in a branch that raises): no program can hold it"));

  // The backend's way in must not change the model: where it receives something else than the
  // graph (the PyTorch 2 module route's eager Python), that must agree with the reference first.
  // Where it does not, tsrepro made it wrongly: a defect of tsrepro, never the backend's verdict.
  // Only the backends that compile ahead of time (PyTorch 2's) have a way in to announce.
  if (tested->compiles_ahead_of_time()) on_phase(Phase::Route);
  try {
    if (std::optional<std::vector<c10::IValue>> received = subject.received(*tested, fresh_inputs(inputs, policy))) {
      const CompareResult agreement = compare_outputs(ref.outputs, *received, nullptr, request.run.compare);
      if (const OutputDiff* differs = agreement.first_failure())
        return finish(invalid_message("tsrepro defect: the model as the backend (" + request.run.backend +
                                      ") receives it, run uncompiled, differs from the reference: " +
                                      describe_diff(*differs)));
      if (!agreement.same)
        return finish(invalid_message("tsrepro defect: the model as the backend (" + request.run.backend +
                                      ") receives it returns other outputs than the reference"));
    }
  } catch (const UserError& e) {
    return finish(invalid_message(std::string("tsrepro defect: ") + e.what()));
  }

  on_phase(Phase::Compile);
  std::unique_ptr<PreparedGraph> prepared;
  const auto compile_started = std::chrono::steady_clock::now();
  auto compile_ended = [&] {
    compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_started).count();
  };
  try {
    prepared = subject.prepare(*tested, fresh_inputs(inputs, policy));
    compile_ended();
  } catch (const UserError&) {
    compile_ended();  // a graph this backend cannot be given at all (aoti: a non-tensor output)
    return finish(invalid_verdict("the backend (" + request.run.backend + ") cannot take " + subject.describe(),
                                  Phase::Compile));
  } catch (const RouteFailure&) {
    compile_ended();  // the way in failed (export's tracing, the converter): the route's failure
    return finish(exception_verdict(Phase::Route));
  } catch (...) {
    compile_ended();
    return finish(exception_verdict(Phase::Compile));
  }
  on_phase(Phase::Run);
  std::vector<c10::IValue> run_inputs = fresh_inputs(inputs, policy);
  try {
    res.outputs = prepared->run(run_inputs);
  } catch (...) {
    return finish(exception_verdict(Phase::Run));
  }
  ran_backend = true;
  if (request.run.backward) {
    on_phase(Phase::Backward);
    try {
      res.grads = input_gradients(res.outputs, run_inputs);
    } catch (...) {
      return finish(exception_verdict(Phase::Backward));
    }
  }

  Verdict verdict;
  if (request.explain) {
    try {
      verdict.backend_graph = prepared->executed_graph();
    } catch (const std::exception& e) {  // the backend ran: a graph libtorch cannot print changes no verdict
      verdict.backend_graph = std::string("(libtorch cannot print the executed graph: ") + e.what() + ")";
    }
  }
  CompareResult comparison = compare_sides(ref, res, nullptr, request.run.compare);
  if (!comparison.same && request.run.compare.use_fp64) {
    // Only now is the fp64 run worth its cost: it can excuse a float32 result that is merely noisy.
    on_phase(Phase::Fp64);
    try {
      if (std::optional<SideResult> fp64 = subject.fp64(*reference))
        comparison = compare_sides(ref, res, &*fp64, request.run.compare);
    } catch (...) {
      // No fp64 reference for this graph (dtype-specific ops): judge by allclose alone, as same() does.
    }
  }
  judge_accuracy(comparison, verdict);  // outputs come first (compare_sides), then the gradients
  return finish(verdict);
}

}  // namespace

namespace {

// What both sides get of a request's graph and inputs: the graph on the request's device, its
// tensor constants constants again, its strict_fusion blocks blocks again.
struct SidesInput {
  BackendInput input;
  std::vector<c10::IValue> inputs;
  std::vector<InputSpec> specs;
};

SidesInput sides_input(const EvalRequest& request, std::vector<c10::IValue> loaded) {
  const c10::Device device(request.run.device);
  SidesInput sides{BackendInput{graph_from_ir(request.graph_ir, "candidate graph"), {}}, {}, request.specs};
  BackendInput& input = sides.input;
  if (!device.is_cpu()) graph_constants_to_device(*input.graph, device);
  conform_to_graph_inputs(loaded, *input.graph);
  sides.inputs = values_to_device(loaded, device);
  if (sides.inputs.size() != input.graph->inputs().size())
    throw UserError("inputs: the graph takes " + std::to_string(input.graph->inputs().size()) + " inputs, got " +
                    std::to_string(sides.inputs.size()));
  fold_constant_inputs(*input.graph, sides.specs, sides.inputs, inputs_maybe_written(*input.graph));
  recreate_strict_fusion_objects(*input.graph);
  for (const InputSpec& spec : sides.specs) input.lifted.push_back(spec.lifted);
  return sides;
}

}  // namespace

std::vector<std::string> Evaluator::pass_applications(const EvalRequest& request, std::vector<c10::IValue> loaded) {
  SidesInput sides = sides_input(request, std::move(loaded));
  return make_backend(request.run.backend, request.run.backend_options)
      ->pass_applications(sides.input, clone_values(sides.inputs));
}

Verdict Evaluator::evaluate_values(const EvalRequest& request, std::vector<c10::IValue> loaded,
                                   const PhaseCallback& on_phase) {
  SidesInput sides = sides_input(request, std::move(loaded));
  BackendInput& input = sides.input;
  std::vector<c10::IValue>& inputs = sides.inputs;
  const std::vector<InputSpec>& specs = sides.specs;
  const InputPolicy policy{request.run.backward ? gradient_inputs(specs) : std::vector<bool>(specs.size(), false),
                           inputs_maybe_written(*input.graph)};
  Subject subject;
  subject.inputs = std::move(inputs);
  subject.policy = policy;
  subject.prepare = [&input](Backend& backend, const std::vector<c10::IValue>& sample) {
    return backend.prepare(input, sample);
  };
  subject.received = [&input](Backend& backend, const std::vector<c10::IValue>& sample) {
    return backend.run_received_model(input, sample);
  };
  subject.fp64 = [&](Backend& reference) -> std::optional<SideResult> {
    const Fp64Reference fp64_case = fp64_reference(input, subject.inputs, policy.with_grad);
    const InputPolicy fp64_policy{policy.with_grad, inputs_maybe_written(*fp64_case.input.graph)};
    return run_reference(reference, fp64_case.input, fp64_case.inputs, fp64_policy);
  };
  subject.describe = [] { return std::string("this graph"); };
  return judge(request, subject, on_phase);
}

Verdict Evaluator::evaluate_module(const EvalRequest& request, std::vector<c10::IValue> loaded,
                                   const PhaseCallback& on_phase) {
  if (request.run.backward) throw UserError(request.module_path + ": a saved model is judged without --backward");
  const c10::Device device(request.run.device);
  // Each side loads the model anew, as a program of its own would: sides that shared one
  // compilation unit would share its compiled functions (freezing a module whose functions ran
  // unoptimized once fails: "Couldn't find method: 'forward' on class ...Inner").
  // Its traced Python floats flagged again, as eager has them (runner/graph/saved_python_numbers.h).
  auto load = [&] {
    torch::jit::Module module = torch::jit::load(request.module_path, device);
    flag_saved_python_numbers(module);
    return module;
  };
  // forward's arguments: the inputs that were not lifted out of the module.
  std::vector<c10::IValue> arguments;
  for (size_t i = 0; i < loaded.size() && i < request.specs.size(); ++i)
    if (!request.specs[i].lifted) arguments.push_back(loaded[i]);
  Subject subject;
  subject.inputs = values_to_device(arguments, device);
  // A program's arguments are its own: each call gets copies (forward may write them).
  subject.policy =
      InputPolicy{std::vector<bool>(subject.inputs.size(), false), std::vector<bool>(subject.inputs.size(), true)};
  subject.prepare = [&load](Backend& backend, const std::vector<c10::IValue>& sample) {
    return backend.prepare_module(load(), sample);
  };
  // A saved model reaches PyTorch 2 by the converter (tsrepro has no Python source of it).
  subject.received = [](Backend&, const std::vector<c10::IValue>&) -> std::optional<std::vector<c10::IValue>> {
    return std::nullopt;
  };
  // dynamo's same_two_models: the model and its inputs in float64.
  subject.fp64 = [&](Backend& reference) -> std::optional<SideResult> {
    torch::jit::Module wide = load();
    wide.to(at::kDouble);
    std::vector<c10::IValue> wide_inputs;
    for (const c10::IValue& value : subject.inputs) wide_inputs.push_back(cast_floating_to_fp64(value));
    return run_prepared_reference(*reference.prepare_module(wide, clone_values(wide_inputs)), wide_inputs,
                                  subject.policy);
  };
  subject.describe = [&] { return "the saved model " + request.module_path; };
  return judge(request, subject, on_phase);
}

}  // namespace tsrepro
