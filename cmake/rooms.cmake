# The rooms of the code: which files each holds and which rooms it may use. One table for two
# readers: CMakeLists.txt makes a static library of each runner room and links it to the rooms
# it uses; cmake/check_rooms.cmake (the unit test `rooms.include_direction`) fails when a file
# includes a header of a room its own room may not use. Globs are relative to the source root;
# a file belongs to the first room whose globs match it.
#
#   file_util  torch-free file and word-list helpers (the tests' support links them too)
#   process    torch-free: the one way to run a child process (process/child_process.h)
#   formats    PyTorch's file formats as tsrepro reads and writes them: torch.save's pickle and zip,
#              IR text (its limits, comments, printable constants), bounded JSON
#   graph      walking and editing graphs and values: nested nodes, typed nodes, literal nodes,
#              the tensors in a value, which inputs a run may write
#   case       the case model and its files: case.json, graph.ir, inputs.pt, input specs,
#              node origins, verdicts, custom-op libraries
#   backends   what executes a graph (backends/<id>/backend.cpp and what they share)
#   exec       judging a case: the evaluation, the comparison, the fp64 reference, RunSpec checks
#   worker     the worker process, its protocol and its zygote
#   import     a module or IR file plus inputs made into a case (lifting, state threading)
#   explain    the autograd table of `tsrepro explain`; the pass a failure starts at (explain --passes)
#   sweep      a zoo under every backend: job directories, executors, grouping into bugs; it
#              runs tsrepro's own commands as jobs, and uses the case model and the writers (its
#              report page draws each bug's graph and describes its backend; template filling)
#   minifier, writers, cli, capture: the layers above (minifier/; repro/ with repro/after/ and the
#   backends' section files; cli/; capture/), listed so that the rooms below cannot reach up.
# The public headers (include/tsrepro/) belong to no room: docs/ARCHITECTURE.md says which layer
# implements each.

# In matching order: the writers' files in backends/ before the backends room's.
set(TSREPRO_ROOMS file_util process formats graph case writers backends exec worker import explain minifier sweep cli
    capture)

set(TSREPRO_ROOM_file_util_FILES runner/file_util.* runner/word_lists.*)
set(TSREPRO_ROOM_file_util_USES)
set(TSREPRO_ROOM_process_FILES process/*)
set(TSREPRO_ROOM_process_USES)
set(TSREPRO_ROOM_formats_FILES runner/formats/*)
set(TSREPRO_ROOM_formats_USES)
set(TSREPRO_ROOM_graph_FILES runner/graph/*)
set(TSREPRO_ROOM_graph_USES)
set(TSREPRO_ROOM_case_FILES runner/case/*)
set(TSREPRO_ROOM_case_USES formats graph file_util process)
set(TSREPRO_ROOM_writers_FILES repro/* backends/*/section.* backends/*/repro.*)
set(TSREPRO_ROOM_backends_FILES backends/*)
set(TSREPRO_ROOM_backends_USES case formats graph file_util process)
set(TSREPRO_ROOM_exec_FILES runner/exec/*)
set(TSREPRO_ROOM_exec_USES backends case formats graph file_util process)
set(TSREPRO_ROOM_worker_FILES runner/worker/*)
set(TSREPRO_ROOM_worker_USES exec backends case formats graph file_util process)
set(TSREPRO_ROOM_import_FILES runner/import/*)
set(TSREPRO_ROOM_import_USES worker exec backends case formats graph file_util process)
set(TSREPRO_ROOM_explain_FILES runner/explain/*)
set(TSREPRO_ROOM_explain_USES exec backends case formats graph file_util process)
set(TSREPRO_ROOM_minifier_FILES minifier/*)
set(TSREPRO_ROOM_minifier_USES explain import worker exec backends case formats graph file_util process)
set(TSREPRO_ROOM_writers_USES minifier explain import worker exec backends case formats graph file_util process)
set(TSREPRO_ROOM_sweep_FILES sweep/*)
set(TSREPRO_ROOM_sweep_USES writers case formats graph file_util process)
set(TSREPRO_ROOM_cli_FILES cli/*)
set(TSREPRO_ROOM_cli_USES sweep writers minifier explain import worker exec backends case formats graph file_util process)
set(TSREPRO_ROOM_capture_FILES capture/*)
set(TSREPRO_ROOM_capture_USES import backends case formats graph file_util process)
# The capture proper (libtsrepro_capture_torch.so) is loaded into a program that has its own
# libtorch and knows nothing of tsrepro: it links libtorch alone, not the rooms' static libraries
# (built without -fPIC, to share one precompiled header), and compiles the files it needs from
# other rooms itself. They are listed here by room; CMakeLists.txt takes them from this table and
# fails where a file is not in the room it is listed under. The one writers' file is the torch-free
# implementation of the public include/tsrepro/after_settings.h.
set(TSREPRO_CAPTURE_BORROWS_process process/child_process.cpp)
set(TSREPRO_CAPTURE_BORROWS_file_util runner/file_util.cpp)
set(TSREPRO_CAPTURE_BORROWS_formats runner/formats/ir_comment_text.cpp runner/formats/printable_constants.cpp)
set(TSREPRO_CAPTURE_BORROWS_graph runner/graph/literal_nodes.cpp runner/graph/ivalue_tensors.cpp
                                   runner/graph/strict_fusion.cpp)
set(TSREPRO_CAPTURE_BORROWS_case runner/case/node_origin.cpp runner/case/ir_text.cpp)
set(TSREPRO_CAPTURE_BORROWS_import runner/import/tensor_constants.cpp runner/import/wrapped_numbers.cpp)
set(TSREPRO_CAPTURE_BORROWS_backends backends/program_options.cpp backends/nnc/program_options.cpp)
set(TSREPRO_CAPTURE_BORROWS_writers repro/after/settings.cpp)
