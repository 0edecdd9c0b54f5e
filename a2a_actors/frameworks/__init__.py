"""Agents built with LLM frameworks, served as a2a-actors agents, and A2A agents as their tools.

One module per framework, each importing only its framework and behind an extra of the same
name (a missing extra is a one-line ImportError naming it):

=================================  ==========================  =================
module                             serves                      extra
=================================  ==========================  =================
``a2a_actors.frameworks.pydantic_ai``  a PydanticAI ``Agent``         ``pydantic-ai``
``a2a_actors.frameworks.langgraph``    a compiled LangGraph graph     ``langgraph``
``a2a_actors.frameworks.openai_agents``  an OpenAI Agents ``Agent``   ``openai-agents``
``a2a_actors.frameworks.agentscope``   an AgentScope ``Agent``       ``agentscope``
``a2a_actors.frameworks.a2a_sdk``      an a2a-sdk ``AgentExecutor``  ``a2a-sdk``
=================================  ==========================  =================

Each has ``as_agent(...)``, which returns an :class:`a2a_actors.Agent` (servable with
``a2a-actors serve module:attr``, usable in pipelines, delegation and in-process). The
framework bridges also have ``remote_tool(target, *, name=None, description=None)``, which
returns the framework's native tool calling an A2A agent (a delegation of the calling
task, see :mod:`._remote`), and map their framework onto a task the same way
(:mod:`._turn`): streamed answer chunks, tool calls as WORKING updates, human-in-the-loop
pauses as INPUT_REQUIRED, a conversation per ``contextId`` kept in the task store
(:mod:`._conversation`), cancel, failures and token usage. The ``a2a_sdk`` bridge runs an
executor written for the official SDK's server, unchanged: the executor writes the task's
events itself (:mod:`._sdk_queue` applies them). docs/frameworks.md has the mapping of
each.

This package sits above :mod:`orchestrator` (its tools delegate): nothing else imports it.
"""

__all__ = ()  # the bridges are imported by module: each needs its own framework
