kts_cli::tool_main!("kts-mcp", kts_mcp::Args, kts_mcp::run);
