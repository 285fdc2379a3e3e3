#pragma once
// The worker's side of the runner protocol: read requests on stdin until it closes, answer on
// stdout. Shared by the tsrepro-runner executable and by workers forked from the zygote.

namespace tsrepro {

// Returns the process's exit code once stdin is closed.
int serve_runner_requests();

}  // namespace tsrepro
