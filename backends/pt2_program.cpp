// The PyTorch 2 backends' compile server and the programs it runs: backends/pt2_program.h.

#include "backends/pt2_program.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/version.h>

#include "backends/builtin.h"
#include "backends/case_module.h"
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

// The Python whose torch compiles: $TSREPRO_PYTHON, else Debian's (the one python3-torch serves).
std::string python_executable() {
  const char* chosen = std::getenv("TSREPRO_PYTHON");
  return chosen && *chosen ? chosen : "/usr/bin/python3";
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
    spec.argv = {python_executable(), "-c", templates::pt2_compile_server};
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
    throw std::runtime_error("the PyTorch 2 compile server (" + python_executable() + ") exited with status " +
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

// An answer that says the request failed, as the exception Python raised.
const json& checked(const json& answer) {
  if (!answer.value("ok", false))
    throw ForeignError(answer.value("type", std::string("Exception")), answer.value("message", std::string()));
  return answer;
}

// Names a compilation: the module's archive (its forward's graph and state), the backend and its
// options. An archive that saved differently twice only costs a second compile.
std::string compilation_key(const std::string& backend, const BackendOptions& options, const std::string& archive) {
  std::string text = backend + '\n';
  for (const auto& [key, value] : options) text += key + '=' + value + '\n';
  std::ostringstream key;
  key << std::hex << std::hash<std::string>{}(text + archive);
  return key.str();
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

// Each compilation's files (the module archive, the package) in this process's scratch directory:
// removed when a CLI process exits, and by the parent when a worker ends (file_util.h).
const ScratchDirectory& work_directory() {
  static const ScratchDirectory work = ScratchDirectory::at(process_scratch_path(::getpid()));
  return work;
}

void write_values(const fs::path& path, const std::vector<c10::IValue>& values) {
  write_torch_save(path.string(), c10::ivalue::Tuple::create(values));
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
  std::string executed_graph() const override {
    return "(compiled in Python: torch.export's program of the case's module, key " + compilation_.key + ")";
  }

 private:
  Pt2Compilation compilation_;
};

}  // namespace

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

Pt2Compilation compile_in_python(const std::string& backend, const BackendOptions& options,
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
                                                    {"module", (dir / "case_module.pt").string()},
                                                    {"inputs", (dir / "sample_inputs.pt").string()},
                                                    {"work", dir.string()},
                                                    {"options", options_json(options)},
                                                    {"libraries", libraries_json()},
                                                    {"seed", kRunSeed}}));
  compilation.package = answer.value("package", std::string());
  // Read by the compile only, and as large as the model's weights: a minify compiles hundreds.
  remove_tree((dir / "case_module.pt").string());
  remove_tree((dir / "sample_inputs.pt").string());
  return compilation;
}

Pt2Compilation compile_in_python(const std::string& backend, const BackendOptions& options, const BackendInput& input,
                                 const std::vector<c10::IValue>& sample) {
  bool packed = false;
  // The reference runs with the case's training flags: so does the module compiled here.
  const torch::jit::Module module = module_of_case(input, sample, packed, TrainingFlags::AsInCase);
  Pt2Compilation compilation = compile_in_python(backend, options, module, forward_inputs(sample, input.lifted));
  compilation.packed = packed;
  compilation.lifted = input.lifted;
  return compilation;
}

std::unique_ptr<PreparedGraph> run_in_python(Pt2Compilation compilation) {
  return std::make_unique<PythonProgram>(std::move(compilation));
}

}  // namespace tsrepro
