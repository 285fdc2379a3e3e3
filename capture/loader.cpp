// libtsrepro_capture.so, the library a user preloads: torch-free, it only decides whether the
// capture proper (libtsrepro_capture_torch.so, capture.cpp, beside it) may be loaded into this
// process, and loads it.
//
// Why two halves: a preloaded library that linked libtorch would load its libtorch into every
// process it is preloaded into, before the program's own. A program that runs another libtorch (a
// pip PyTorch, a libtorch unpacked elsewhere) then maps two copies, and the second copy's static
// registrations meet the first one's dispatcher: "Tried to register multiple backend fallbacks
// for the same dispatch key", abort, with or without TSREPRO_AFTER. This half maps nothing of
// torch. Once the program has mapped its libtorch_cpu (a C++ program: before any constructor
// runs; Python: when `import torch` dlopens torch._C), it compares that library with the one the
// capture was built against, and loads the capture only if they are the same file. Otherwise it
// says so in one line and the program runs as it would without the preload.
//
// With no TSREPRO_AFTER, or in the checks' own processes, it does nothing at all.

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "capture/capture_voice.h"

namespace tsrepro::capture {
namespace {

// Beside this library, installed and in the build tree alike.
constexpr const char* kCaptureProper = "libtsrepro_capture_torch.so";

// The libtorch_cpu the capture proper links, as CMake found it at build time.
constexpr const char* kBuiltAgainst = TSREPRO_CAPTURE_LIBTORCH_CPU;

// Set once the question is settled: the capture is loaded, refused, or not wanted.
std::atomic<bool> decided{false};
std::mutex deciding;

// The capture proper may only be loaded when every library the program has mapped is
// initialized: loading it runs the initializers of whatever it depends on that has not run yet.
// Two moments break that. At startup, libraries' constructors call dlopen before ours has run
// (libGLdispatch's does: loading then crashed inside libGLX's initializer), so the hook waits for
// our constructor, which the dynamic loader runs after those of the libraries the program links
// (a preloaded library depends on none of them). Within a dlopen, the initializers of the
// libraries it maps call dlopen themselves, so the hook acts only when the outermost call returns.
std::atomic<bool> constructed{false};
thread_local int dlopen_depth = 0;

bool capture_requested() {
  const char* after = std::getenv("TSREPRO_AFTER");
  return after && *after && !std::getenv(kChildVariable);
}

std::string real_path(const char* path) {
  char resolved[PATH_MAX];
  return realpath(path, resolved) ? std::string(resolved) : std::string(path);
}

// The files of every libtorch_cpu this process maps, resolved (a symlink to the same file is the
// same library).
std::vector<std::string> mapped_libtorch_cpu() {
  std::vector<std::string> found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const char* path = info->dlpi_name;
        const char* slash = path ? std::strrchr(path, '/') : nullptr;
        const char* name = slash ? slash + 1 : path;
        if (name && std::strncmp(name, "libtorch_cpu.so", 15) == 0)
          static_cast<std::vector<std::string>*>(out)->push_back(real_path(path));
        return 0;
      },
      &found);
  return found;
}

std::string directory_of_this_library() {
  Dl_info self{};
  if (!dladdr(reinterpret_cast<void*>(&directory_of_this_library), &self) || !self.dli_fname) return ".";
  const std::string path = self.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

void load_capture_proper(void* (*real_dlopen)(const char*, int)) {
  const std::string path = directory_of_this_library() + "/" + kCaptureProper;
  if (!real_dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE))
    say(std::string("capture is off: cannot load ") + path + ": " + dlerror());
}

// Loads the capture proper if the program's libtorch is the one it was built against; says why
// not otherwise. Undecided while the program has mapped no libtorch_cpu yet.
void decide(void* (*real_dlopen)(const char*, int)) {
  if (decided.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(deciding);
  if (decided.load(std::memory_order_relaxed)) return;
  const std::vector<std::string> mapped = mapped_libtorch_cpu();
  if (mapped.empty()) return;
  // Settled before the load: the capture proper's own dlopen calls come back through here.
  decided.store(true, std::memory_order_release);
  const std::string expected = real_path(kBuiltAgainst);
  if (mapped.size() == 1 && mapped.front() == expected) return load_capture_proper(real_dlopen);
  std::string uses;
  for (const std::string& path : mapped) uses += (uses.empty() ? "" : " and ") + path;
  say("capture is off: the program's libtorch is " + uses + ", and this libtsrepro_capture.so was built against " +
      expected + " (a second libtorch in one process aborts it); build tsrepro against the program's libtorch");
}

void* (*real_dlopen())(const char*, int) {
  static auto* real = reinterpret_cast<void* (*)(const char*, int)>(dlsym(RTLD_NEXT, "dlopen"));
  return real;
}

__attribute__((constructor)) void on_load() {
  if (!capture_requested()) {
    decided = true;
    return;
  }
  decide(real_dlopen());  // a C++ program linked against libtorch has mapped it already
  constructed = true;
}

}  // namespace
}  // namespace tsrepro::capture

// The program's own dlopen calls come here first (LD_PRELOAD puts this library ahead of libc):
// after each one, until the question is settled, look again for a libtorch. Python's
// `import torch` is such a call.
extern "C" __attribute__((visibility("default"))) void* dlopen(const char* file, int mode) {
  namespace capture = tsrepro::capture;
  ++capture::dlopen_depth;
  void* handle = capture::real_dlopen()(file, mode);
  --capture::dlopen_depth;
  // Only after a load that worked: a failed one maps nothing, and its dlerror() stays the caller's.
  if (handle && capture::dlopen_depth == 0 && capture::constructed.load(std::memory_order_acquire) &&
      !capture::decided.load(std::memory_order_acquire))
    capture::decide(capture::real_dlopen());
  return handle;
}
