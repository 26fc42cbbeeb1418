"""The curriculum: lessons to walk a class through, challenges to set it, a guided tour, and
the teacher task.

catalogue   the lessons: a setup per page, what to watch, why, a promise, setups to compare
challenges  goals with numbers, checked live on what a run reaches
tour        guided tours: stops across the pages, each a setup, a sentence, a part to point at, a pace
teacher     the seed notes' teacher task trained end to end
"""
