kts_cli::tool_main!("kts-index", kts_index::Args, kts_index::run);
