kts_cli::tool_main!("kts-chunk", kts_chunk::Args, kts_chunk::run);
