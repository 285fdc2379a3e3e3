#pragma once
// Waiting for a child process with a time limit: the one loop the report's program runs and the
// minifier's --test-command share.

#include <chrono>
#include <system_error>
#include <thread>

#include <boost/process.hpp>

namespace tsrepro {

// Waits up to `limit` for `child`; one that is still running then is terminated. True when it
// exited by itself: its exit_code() / native_exit_code() are then its own. Polls, because
// child::wait_for blocks for its whole timeout when the child has already exited.
inline bool wait_within(boost::process::child& child, std::chrono::duration<double> limit,
                        std::chrono::milliseconds poll) {
  std::error_code ec;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(limit);
  while (child.running(ec) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(poll);
  const bool finished = !child.running(ec);
  if (!finished) child.terminate(ec);
  child.wait(ec);
  return finished;
}

}  // namespace tsrepro
