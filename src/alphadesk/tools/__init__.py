"""The tools agents call: typed async functions over the data layer and the analytics.

Shared by every toolset: :mod:`.deps` (what a tool reads from its run) and :mod:`.common`
(the output envelope, periods, data loading). Market toolsets: :mod:`.market`,
:mod:`.fundamentals`, :mod:`.research`, :mod:`.social`, and the packages :mod:`.chart` and
:mod:`.options` (with the 0DTE engine). The assistant's own tools are in :mod:`.assistant`;
:mod:`.catalog` lists every toolset for the assistant's router and ``alphadesk tools``.
Imports go downward in that order: a package's modules never import its ``__init__``.
"""
