#pragma once
// A fork server for runner workers. libtorch's static initialization (operator registration,
// relocations) costs about 0.6 s of CPU per process on this machine: a fresh tsrepro-runner per
// worker, and again after every crash or hang, pays it each time. The zygote is a copy of the CLI
// forked right after start-up, before anything ran on torch and while the process has one thread;
// it never runs anything itself and forks a worker on request in a few milliseconds, the way
// Android's zygote or a CPython forkserver does.
//
// Workers are the zygote's children: the parent kills them by pid (each leads its own process
// group) and asks the zygote for their wait status. When the parent dies its end of the socket
// closes and the zygote exits, and the workers it left see their stdin close and exit too.

#include <string>

#include <sys/types.h>

namespace tsrepro::zygote {

// Forks the zygote. Only for a process that has one thread and has not initialized a device
// (a fork after CUDA's initialization gives a child that cannot use it); returns false, and
// the runner falls back to starting tsrepro-runner, when that does not hold or the fork fails.
bool start();

// Whether workers can be forked (start() succeeded in this process and the zygote answered
// so far).
bool available();

// A worker serving runner requests on `request_fd` (its stdin) and `answer_fd` (its stdout),
// its stderr in `log_path`. The descriptors are the caller's, still to be closed by it. Returns
// the worker's pid; throws std::runtime_error when the zygote cannot fork one.
pid_t spawn_worker(int request_fd, int answer_fd, const std::string& log_path);

// Waits until the worker has ended and returns its raw wait status (WIFSIGNALED...).
int wait_for_worker(pid_t pid);

// Ends the zygote: closes its socket (it exits) and reaps it. A command calls it before it exits,
// its workers stopped: what waits on tsrepro's process group then finds no zombie of ours.
void stop();

}  // namespace tsrepro::zygote
