mod support;

mod custom_tools;
mod soft_requirement;
mod thinking;
mod tool_calls;
mod transport;
mod usage;
mod wire;
