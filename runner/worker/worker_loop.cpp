// A persistent worker: libtorch is loaded once, then requests come, one JSON line each on stdin,
// and get phase lines ({"phase": ...}) and one final line ({"verdict": ...} or {"error": ...})
// on stdout. Whatever a candidate does to this process (abort, segfault, hang) the parent
// notices and starts a fresh worker.

#include <cstdio>
#include <iostream>
#include <malloc.h>
#include <string>

#include <unistd.h>

#include <spdlog/spdlog.h>

#include "runner/exec/evaluate.h"
#include "runner/worker/worker_loop.h"

namespace tsrepro {
namespace {

// The protocol gets its own descriptor; fd 1 is pointed at stderr so that anything a library
// prints cannot corrupt the answers.
FILE* open_protocol_channel() {
  const int protocol_fd = ::dup(STDOUT_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  FILE* channel = ::fdopen(protocol_fd, "w");
  std::setvbuf(channel, nullptr, _IONBF, 0);  // a crash must not swallow a phase line
  return channel;
}

void send(FILE* channel, const nlohmann::json& message) {
  const std::string line = message.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), channel);
}

}  // namespace

int serve_runner_requests() {
  ::setpgid(0, 0);  // its own process group: a timeout kills whatever it started, too
  // Tensors of 128 KiB and more in their own mappings, handed back when freed. glibc's default
  // raises this threshold after a big mapped block is freed (up to 32 MiB), after which the fp64
  // reference's parameter copies come from the heap and stay with the worker: on resnet18 the
  // worker kept about 45 MB more after a few accuracy queries. Setting it stops the raising.
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  FILE* channel = open_protocol_channel();
  if (const char* level = std::getenv("TSREPRO_LOG")) spdlog::set_level(spdlog::level::from_str(level));

  Evaluator evaluator;
  for (std::string line; std::getline(std::cin, line);) {
    if (line.empty()) continue;
    try {
      const EvalRequest request = request_from_json(nlohmann::json::parse(line));
      const Verdict verdict = evaluator.evaluate(request, [&](Phase phase) {
        send(channel, {{"phase", phase_name(phase)}});
      });
      send(channel, {{"verdict", verdict_to_json(verdict)}});
    } catch (const c10::Error& e) {
      send(channel, {{"error", e.what_without_backtrace()}});
    } catch (const std::exception& e) {
      send(channel, {{"error", e.what()}});
    }
  }
  return 0;
}

}  // namespace tsrepro
