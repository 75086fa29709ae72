kts_cli::tool_main!("kts-embed", kts_embed::Args, kts_embed::run);
