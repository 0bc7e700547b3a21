# A planted link graph for build_layering_detects_forbidden_edge: the planner
# links the IR (a direct edge no layer allows) and the device database links
# reports, which links code generation (a "never" rule, reached through
# another library).
set(links_planner "ir")
set(links_ir "support")
set(links_support "")
set(links_device "schedule;reports")
set(links_reports "codegen")
set(links_schedule "ir;planner")
set(links_codegen "ir;LLVM")
set(graph_libraries "planner;ir;support;device;reports;schedule;codegen")
