"""mongomem inside the agent frameworks people already use; one module per framework, each an extra.

    pip install 'mongomem[strands]'        # mongomem.integrations.strands
    pip install 'mongomem[langgraph]'      # mongomem.integrations.langgraph
    pip install 'mongomem[openai-agents]'  # mongomem.integrations.openai_agents
    pip install 'mongomem[pydantic-ai]'    # mongomem.integrations.pydantic_ai

Nothing here is imported by the Lambda runtime or the record path; importing this package imports
no framework. What each integration records, when and under which ids: docs/integrations.md.
"""
