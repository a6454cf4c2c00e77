mod support;

mod custom_tools;
mod soft_requirement;
mod tool_calls;
mod transport;
mod wire;
