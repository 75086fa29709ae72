kts_cli::tool_main!("kts-graph", kts_graph::Args, kts_graph::run);
