//! `completions/`: bash, zsh and fish completions of each tool.

use std::path::Path;

use clap_complete::{Generator, Shell};

use crate::{Generated, Tool};

const SHELLS: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

pub(crate) fn files(tool: &Tool) -> Vec<Generated> {
    SHELLS.iter().map(|&shell| file(tool, shell)).collect()
}

fn file(tool: &Tool, shell: Shell) -> Generated {
    let mut command = (tool.command)();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, tool.name, &mut script);
    Generated {
        path: Path::new("completions").join(shell.file_name(tool.name)),
        contents: String::from_utf8(script).expect("completion scripts are UTF-8"),
    }
}
