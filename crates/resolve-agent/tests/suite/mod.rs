mod support;

mod custom_tools;
mod hostile_server;
mod llama;
mod reviewer_notes;
mod soft_requirement;
mod thinking;
mod tool_calls;
mod transport;
mod usage;
mod wire;
