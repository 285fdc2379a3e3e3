// The PyTorch 2 backends' compile server and the programs it runs: backends/pt2_program.h.

#include "backends/pt2_program.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/version.h>

#include "backends/builtin.h"
#include "backends/case_module.h"
#include "backends/eager_module.h"
#include "backends/inductor_config_check.h"
#include "backends/options.h"
#include "backends/pt2_backend_scripts.h"
#include "backends/pt2_compile_server_script.h"
#include "process/child_process.h"
#include "runner/case/extension_libraries.h"
#include "runner/formats/torch_save_reader.h"
#include "runner/formats/torch_save_writer.h"
#include "runner/file_util.h"
#include "tsrepro/error.h"
#include "tsrepro/foreign_error.h"
#include "tsrepro/run_spec.h"

namespace tsrepro {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Each compilation's files (the module archive, the package) in this process's scratch directory:
// removed when a CLI process exits, and by the parent when a worker ends (file_util.h).
const ScratchDirectory& work_directory() {
  static const ScratchDirectory work = ScratchDirectory::at(process_scratch_path(::getpid()));
  return work;
}

void write_values(const fs::path& path, const std::vector<c10::IValue>& values) {
  write_torch_save(path.string(), c10::ivalue::Tuple::create(values));
}

// The backends' compile.py files (backends/<id>/compile.py, embedded at build time), written once
// per process into its scratch directory: the folder the server imports each from.
std::string backend_scripts_folder() {
  static const std::string folder = [] {
    const fs::path dir = fs::path(work_directory().path()) / "pt2_backends";
    fs::create_directories(dir);
    for (const templates::EmbeddedFile& file : templates::pt2_backend_scripts)
      write_file_atomically((dir / (std::string(file.folder) + ".py")).string(), file.text);
    return dir.string();
  }();
  return folder;
}

// One per process: the worker's. Requests are answered in order, one at a time. The server is the
// worker's child in the worker's process group: a worker killed at its time limit takes it along.
class CompileServer {
 public:
  json ask(const json& request) {
    if (!server_ || !server_->running()) start();
    if (!write_all(server_->stdin_fd(), request.dump() + "\n")) died();
    const std::optional<std::string> line = read_line();
    if (!line) died();
    return json::parse(*line);
  }

 private:
  void start() {
    ChildSpec spec;
    // The script as -c's text: nothing to find on disk, whatever the install layout.
    spec.argv = {pt2_python_executable(), "-c", templates::pt2_compile_server, backend_scripts_folder()};
    spec.in = spec.out = Stream::pipe();  // its stderr is the worker's: the worker's log
    try {
      server_.emplace(spec);
    } catch (const std::exception& e) {
      throw std::runtime_error("the PyTorch 2 compile server could not start: " + std::string(e.what()));
    }
    buffered_.clear();
  }

  std::optional<std::string> read_line() {
    for (;;) {
      if (const size_t newline = buffered_.find('\n'); newline != std::string::npos) {
        std::string line = buffered_.substr(0, newline);
        buffered_.erase(0, newline + 1);
        return line;
      }
      char chunk[65536];
      const ssize_t n = ::read(server_->stdout_fd(), chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      buffered_.append(chunk, static_cast<size_t>(n));
    }
  }

  // The server ended in the middle of a request. Killed by a signal (Inductor's generated code
  // crashed): the worker ends by the same signal, the verdict it would have given had the code
  // run in it. Otherwise (Python itself failed to start): an error naming the interpreter.
  [[noreturn]] void died() {
    const int status = server_->wait();
    server_.reset();
    if (WIFSIGNALED(status)) {
      std::signal(WTERMSIG(status), SIG_DFL);
      std::raise(WTERMSIG(status));
    }
    throw std::runtime_error("the PyTorch 2 compile server (" + pt2_python_executable() + ") exited with status " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : status) +
                             " (its messages are in the worker's log)");
  }

  std::optional<Child> server_;
  std::string buffered_;  // bytes read past the last complete line
};

CompileServer& compile_server() {
  static CompileServer server;
  return server;
}

// What a compile's answer tells the worker beyond success: aoti's package file, and inductor's
// account of what Dynamo captured. One place for both ways in (a saved model, a case).
void take_answer(const json& answer, Pt2Compilation& compilation) {
  compilation.package = answer.value("package", std::string());
  compilation.captured = answer.value("captured", std::string());
  compilation.applications = answer.value("applications", std::vector<std::string>());
}

// An answer that says the request failed, as the exception Python raised: a RouteFailure where
// the route failed (unless the backend judges its route itself).
const json& checked(const json& answer, bool route_is_the_subject = true) {
  if (!answer.value("ok", false)) {
    const std::string type = answer.value("type", std::string("Exception"));
    std::string message = answer.value("message", std::string());
    const bool route = answer.value("stage", std::string()) == "route";
    // After the message's first line, which the signature keeps: how to get past it.
    if (route && type.find("GuardOnDataDependentSymNode") != std::string::npos)
      message +=
          "\n\ntsrepro: torch.export stopped at a data-dependent guard; on the module route, --backend-opt "
          "export=draft exports with the inputs' real values deciding it (torch.export's draft_export)";
    if (route && !route_is_the_subject) throw RouteFailure(type, message);
    throw ForeignError(type, message);
  }
  return answer;
}

// What a compiled program depends on, as text to hash: a value's type and shape, and with `data`
// its contents (the module's state: a compile bakes it in; not forward's tensors: a program runs
// on any of the same type and shape).
void add_fingerprint(const c10::IValue& value, bool data, std::string& out) {
  if (value.isTensor()) {
    const at::Tensor& t = value.toTensor();
    std::ostringstream meta;
    meta << "T" << t.scalar_type() << t.sizes() << t.strides() << t.device() << t.requires_grad() << ";";
    out += meta.str();
    if (data && t.defined() && t.numel() > 0) {
      const at::Tensor bytes = t.detach().cpu().contiguous();
      out += std::to_string(std::hash<std::string_view>{}(
          std::string_view(static_cast<const char*>(bytes.data_ptr()), static_cast<size_t>(bytes.nbytes()))));
    }
    return;
  }
  if (value.isList() || value.isTuple()) {
    out += value.isList() ? "[" : "(";
    const std::vector<c10::IValue> items =
        value.isList() ? value.toListRef().vec() : value.toTupleRef().elements().vec();
    for (const c10::IValue& item : items) add_fingerprint(item, data, out);
    out += value.isList() ? "]" : ")";
    return;
  }
  std::ostringstream text;
  text << value.tagKind() << ":" << value << ";";
  out += text.str();
}

std::string hashed(const std::string& text) {
  std::ostringstream key;
  key << std::hex << std::hash<std::string>{}(text);
  return key.str();
}

// Names a compilation: the module's archive (its forward's graph and state), the backend and its
// options. An archive that saved differently twice only costs a second compile.
std::string compilation_key(const std::string& backend, const BackendOptions& options, const std::string& archive) {
  std::string text = backend + '\n';
  for (const auto& [key, value] : options) text += key + '=' + value + '\n';
  return hashed(text + archive);
}

// The extension libraries this process loaded (torchvision's operators): the server loads them too,
// or the module it is handed could not even be read back, and imports the Python package each is
// part of, as a program using its operators does (python_package_of).
json libraries_json() {
  json libraries = json::array();
  for (const ExtensionLibrary& library : loaded_extension_libraries())
    libraries.push_back({{"path", library.path}, {"package", python_package_of(library.path)}});
  return libraries;
}

json options_json(const BackendOptions& options) {
  json object = json::object();
  for (const auto& [key, value] : options) object[key] = value;
  return object;
}

class PythonProgram : public PreparedGraph {
 public:
  explicit PythonProgram(Pt2Compilation compilation) : compilation_(std::move(compilation)) {}

  std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) override {
    const fs::path dir = fs::path(work_directory().path()) / compilation_.key;
    write_values(dir / "run_inputs.pt", forward_inputs(inputs, compilation_.lifted));
    checked(compile_server().ask({{"op", "run"},
                                  {"key", compilation_.key},
                                  {"inputs", (dir / "run_inputs.pt").string()},
                                  {"outputs", (dir / "run_outputs.pt").string()},
                                  {"seed", kRunSeed}}));
    return graph_outputs(read_torch_save((dir / "run_outputs.pt").string()), compilation_.packed);
  }
  // No TorchScript graph ran: what the compiler was given is the nearest thing, and under
  // torch.compile how much of the model Dynamo captured (a graph break in a loop leaves a whole
  // frame to eager, which then passes without being compiled).
  std::string executed_graph() const override {
    const std::string where = "(compiled in Python by the PyTorch 2 compile server, key " + compilation_.key + ")";
    return compilation_.captured.empty() ? where : compilation_.captured + "\n" + where;
  }

 private:
  Pt2Compilation compilation_;
};

}  // namespace

std::string pt2_python_executable() {
  const char* chosen = std::getenv("TSREPRO_PYTHON");
  return chosen && *chosen ? chosen : "/usr/bin/python3";
}

void require_pytorch2(const std::string& backend) {
#if TORCH_VERSION_MAJOR < 2
  throw UserError("--backend " + backend + ": needs PyTorch 2 (torch.export, Inductor, AOTInductor: libtorch and " +
                  "python3-torch 2.6, as on Debian 13); this tsrepro is built on libtorch " + TORCH_VERSION);
#else
  (void)backend;
#endif
}

std::vector<c10::IValue> graph_outputs(const c10::IValue& returned, bool packed) {
  if (!packed) return {returned};
  if (returned.isTuple()) return returned.toTupleRef().elements().vec();
  if (returned.isList()) return returned.toListRef().vec();
  throw std::runtime_error("the compiled module returned " + returned.tagKind() +
                           " where the case has several outputs");
}

Pt2Route pt2_route(const BackendOptions& options, Pt2Route fallback) {
  const std::string chosen =
      option_choice(options, "route", {"module", "converter"}, fallback == Pt2Route::Module ? "module" : "converter");
  return chosen == "module" ? Pt2Route::Module : Pt2Route::Converter;
}

bool pt2_draft_export(const BackendOptions& options, Pt2Route route) {
  const bool draft = option_choice(options, "export", {"default", "draft"}, "default") == "draft";
  if (draft && route == Pt2Route::Converter)
    throw UserError(
        "--backend-opt export=draft: draft_export takes the module route's model; with route=converter "
        "the TorchScript converter makes the program itself");
  return draft;
}

BackendOptions with_export_option(BackendOptions server_options, const BackendOptions& options, Pt2Route route) {
  if (pt2_draft_export(options, route)) server_options["export"] = "draft";
  return server_options;
}

Pt2Compilation compile_saved_model(const std::string& backend, const BackendOptions& options,
                                   const torch::jit::Module& module, const std::vector<c10::IValue>& forward_sample) {
  std::ostringstream archive;
  module.save(archive);
  Pt2Compilation compilation;
  compilation.key = compilation_key(backend, options, archive.str());
  const fs::path dir = fs::path(work_directory().path()) / compilation.key;
  fs::create_directories(dir);
  write_file_atomically((dir / "case_module.pt").string(), archive.str());
  write_values(dir / "sample_inputs.pt", forward_sample);
  const json answer = checked(compile_server().ask({{"op", "compile"},
                                                    {"key", compilation.key},
                                                    {"backend", backend},
                                                    {"route", "converter"},
                                                    {"module", (dir / "case_module.pt").string()},
                                                    {"inputs", (dir / "sample_inputs.pt").string()},
                                                    {"work", dir.string()},
                                                    {"options", options_json(options)},
                                                    {"libraries", libraries_json()},
                                                    {"seed", kRunSeed}}));
  take_answer(answer, compilation);
  // Read by the compile only, and as large as the model's weights.
  remove_tree((dir / "case_module.pt").string());
  remove_tree((dir / "sample_inputs.pt").string());
  return compilation;
}

Pt2Case::Pt2Case(std::string backend, BackendOptions options, Pt2Route route, bool route_is_the_subject,
                 const BackendInput& input, const std::vector<c10::IValue>& sample)
    : backend_(std::move(backend)),
      options_(std::move(options)),
      route_(route),
      route_is_the_subject_(route_is_the_subject),
      graph_(input.graph.get()),
      input_(input),
      sample_(sample) {
  // The key: what the program depends on, without writing anything (a program the server holds
  // is not sent again: its model and state can be as large as the model's weights).
  std::string text = backend_ + '\n' + (route_ == Pt2Route::Module ? "module" : "converter") + '\n';
  for (const auto& [key, value] : options_) text += key + '=' + value + '\n';
  if (route_ == Pt2Route::Module) {
    eager_ = eager_module(*input_.graph, input_.lifted);
    packed_ = eager_.packed;
    text += eager_module_file(eager_);
  } else {
    text += input_.graph->toString();
    packed_ = input_.graph->outputs().size() > 1;
  }
  for (size_t i = 0; i < sample_.size(); ++i)
    add_fingerprint(sample_[i], i < input_.lifted.size() && input_.lifted[i], text);
  key_ = hashed(text);
}

void Pt2Case::write_model_files() {
  if (files_written_) return;
  if (route_ == Pt2Route::Module && !eager_.refused.empty())
    throw UserError("the module route: the graph has no eager Python form: " + eager_.refused);
  const fs::path dir = fs::path(work_directory().path()) / key_;
  fs::create_directories(dir);
  write_values(dir / "sample_inputs.pt", forward_inputs(sample_, input_.lifted));
  if (route_ == Pt2Route::Module) {
    write_file_atomically((dir / "model.py").string(), eager_module_file(eager_));
    spdlog::debug("the module route's model ({}):\n{}", (dir / "model.py").string(), eager_module_file(eager_));
    std::vector<c10::IValue> state;
    for (const EagerAttribute& attribute : eager_.attributes)
      state.push_back(attribute.input ? sample_.at(*attribute.input) : attribute.constant);
    write_values(dir / "state.pt", state);
  } else {
    bool packed = false;
    // The reference runs with the case's training flags: so does the module compiled here.
    const torch::jit::Module module = module_of_case(input_, sample_, packed, TrainingFlags::AsInCase);
    std::ostringstream archive;
    module.save(archive);
    write_file_atomically((dir / "case_module.pt").string(), archive.str());
  }
  files_written_ = true;
}

// The request's fields that name the model: the module route's source and state, or the archive.
json model_fields(const fs::path& dir, Pt2Route route) {
  json fields = {{"inputs", (dir / "sample_inputs.pt").string()}, {"libraries", libraries_json()}};
  if (route == Pt2Route::Module) {
    fields["route"] = "module";
    fields["source"] = (dir / "model.py").string();
    fields["state"] = (dir / "state.pt").string();
  } else {
    fields["route"] = "converter";
    fields["module"] = (dir / "case_module.pt").string();
  }
  return fields;
}

std::vector<std::string> Pt2Case::attribute_names() const {
  std::vector<std::string> names;
  for (const EagerAttribute& attribute : eager_.attributes) names.push_back(attribute.name);
  return names;
}

std::optional<std::vector<c10::IValue>> Pt2Case::run_eager() {
  if (route_ != Pt2Route::Module) return std::nullopt;
  write_model_files();
  const fs::path dir = fs::path(work_directory().path()) / key_;
  json request = model_fields(dir, route_);
  request.update({{"op", "eager"},
                  {"key", key_},
                  {"attributes", attribute_names()},
                  {"outputs", (dir / "eager_outputs.pt").string()},
                  {"seed", kRunSeed}});
  // A failure here is tsrepro's: the eager form raised where the TorchScript reference did not.
  const json answer = compile_server().ask(request);
  if (!answer.value("ok", false))
    throw UserError("the module route: the eager module form raises " + answer.value("type", std::string()) + ": " +
                    answer.value("message", std::string()) +
                    (answer.contains("where") ? " (" + answer.value("where", std::string()) + ")" : ""));
  eager_outputs_ = graph_outputs(read_torch_save((dir / "eager_outputs.pt").string()), packed_);
  remove_tree((dir / "eager_outputs.pt").string());
  return eager_outputs_;
}

json Pt2Case::ask_compile() {
  const fs::path dir = fs::path(work_directory().path()) / key_;
  const bool held = compile_server().ask({{"op", "has"}, {"key", key_}}).value("has", false);
  if (!held) write_model_files();
  json request = model_fields(dir, route_);
  request.update({{"op", "compile"},
                  {"key", key_},
                  {"backend", backend_},
                  {"attributes", attribute_names()},
                  {"work", dir.string()},
                  {"options", options_json(options_)},
                  {"seed", kRunSeed}});
  json answer = compile_server().ask(request);
  // Read by the compile only, and as large as the model's weights: a minify compiles hundreds.
  for (const char* name : {"model.py", "state.pt", "case_module.pt", "sample_inputs.pt"})
    remove_tree((dir / name).string());
  files_written_ = false;
  return answer;
}

Pt2Compilation Pt2Case::compile() {
  Pt2Compilation compilation;
  compilation.key = key_;
  compilation.packed = packed_;
  compilation.lifted = input_.lifted;
  take_answer(checked(ask_compile(), route_is_the_subject_), compilation);
  return compilation;
}

std::vector<std::string> Pt2Case::subsystem_applications() {
  const json answer = ask_compile();
  if (!answer.contains("applications")) checked(answer, route_is_the_subject_);  // a failure before any
  return answer.value("applications", std::vector<std::string>());
}

std::optional<std::vector<c10::IValue>> Pt2Backend::run_received_model(const BackendInput& input,
                                                                       const std::vector<c10::IValue>& sample) {
  last_ = std::make_unique<Pt2Case>(id_, options_, route_, route_is_the_subject_, input, sample);
  return last_->run_eager();
}

std::unique_ptr<PreparedGraph> Pt2Backend::prepare(const BackendInput& input, const std::vector<c10::IValue>& sample) {
  return run_in_python(pt2_case(input, sample).compile());
}

std::unique_ptr<PreparedGraph> Pt2Backend::prepare_module(const torch::jit::Module& module,
                                                          const std::vector<c10::IValue>& sample) {
  return run_in_python(compile_saved_model(id_, options_, module, sample));
}

void Pt2Backend::check_options_with_compiler() const { check_inductor_config(options_); }

std::optional<CompilerBisectPlan> Pt2Backend::compiler_bisect_plan() {
  const json answer = checked(compile_server().ask({{"op", "bisect_plan"}, {"backend", id_}}));
  CompilerBisectPlan plan;
  plan.stages = answer.at("stages").get<std::vector<std::string>>();
  plan.last = answer.at("last").get<std::string>();
  plan.texts = answer.value("texts", std::map<std::string, std::string>());
  plan.application_texts = answer.value("applications", std::map<std::string, std::string>());
  for (const json& s : answer.at("subsystems"))
    plan.subsystems.push_back({s.at("stage").get<std::string>(), s.at("name").get<std::string>(),
                               s.at("counted").get<bool>(), s.value("within", s.at("stage").get<std::string>())});
  return plan;
}

std::vector<std::string> Pt2Backend::pass_applications(const BackendInput& input,
                                                       const std::vector<c10::IValue>& sample) {
  // Only a subsystem's applications are counted (bisect=STAGE:SUBSYSTEM:all).
  const std::optional<BisectPoint> point = option_bisect_point(options_);
  if (!point || point->subsystem.empty()) return {};
  return pt2_case(input, sample).subsystem_applications();
}

Pt2Case& Pt2Backend::pt2_case(const BackendInput& input, const std::vector<c10::IValue>& sample) {
  if (!last_ || last_->graph() != input.graph.get())
    last_ = std::make_unique<Pt2Case>(id_, options_, route_, route_is_the_subject_, input, sample);
  return *last_;
}

std::unique_ptr<PreparedGraph> run_in_python(Pt2Compilation compilation) {
  return std::make_unique<PythonProgram>(std::move(compilation));
}

}  // namespace tsrepro
