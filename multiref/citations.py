"""Each paper's BibTeX, once: the dataset cards and the ``evaluate`` modules read it from here.

The entries are the ACL Anthology's (https://aclanthology.org/N18-1188, W19-5944, I17-1099) and
the TACL article's (https://doi.org/10.1162/tacl_a_00347), in the Anthology's field order.
Standard library only (an ``evaluate`` module imports it).
"""

#: Xu et al. 2018, the LSDSCC corpus, its test set and its metrics (MaxBLEU, MDS, PDS).
XU_2018 = """@inproceedings{xu-etal-2018-lsdscc,
    title = "{LSDSCC}: a Large Scale Domain-Specific Conversational Corpus for Response Generation with Diversity Oriented Evaluation Metrics",
    author = "Xu, Zhen and Jiang, Nan and Liu, Bingquan and Rong, Wenge and Wu, Bowen and Wang, Baoxun and Wang, Zhuoran and Wang, Xiaolong",
    booktitle = "Proceedings of the 2018 Conference of the North {A}merican Chapter of the Association for Computational Linguistics: Human Language Technologies, Volume 1 (Long Papers)",
    year = "2018",
    address = "New Orleans, Louisiana",
    publisher = "Association for Computational Linguistics",
    pages = "2070--2080",
    doi = "10.18653/v1/N18-1188"
}"""

#: Li et al. 2017, DailyDialog.
LI_2017 = """@inproceedings{li-etal-2017-dailydialog,
    title = "{D}aily{D}ialog: A Manually Labelled Multi-turn Dialogue Dataset",
    author = "Li, Yanran and Su, Hui and Shen, Xiaoyu and Li, Wenjie and Cao, Ziqiang and Niu, Shuzi",
    booktitle = "Proceedings of the Eighth International Joint Conference on Natural Language Processing (Volume 1: Long Papers)",
    year = "2017",
    address = "Taipei, Taiwan",
    publisher = "Asian Federation of Natural Language Processing",
    pages = "986--995"
}"""

#: Gupta et al. 2019, multi-reference DailyDialog.
GUPTA_2019 = """@inproceedings{gupta-etal-2019-investigating,
    title = "Investigating Evaluation of Open-Domain Dialogue Systems With Human Generated Multiple References",
    author = "Gupta, Prakhar and Mehri, Shikib and Zhao, Tiancheng and Pavel, Amy and Eskenazi, Maxine and Bigham, Jeffrey",
    booktitle = "Proceedings of the 20th Annual SIGdial Meeting on Discourse and Dialogue",
    year = "2019",
    address = "Stockholm, Sweden",
    publisher = "Association for Computational Linguistics",
    pages = "379--391",
    doi = "10.18653/v1/W19-5944"
}"""

#: Sai et al. 2020, DailyDialog++.
SAI_2020 = """@article{sai-etal-2020-improving,
    title = "Improving Dialog Evaluation with a Multi-reference Adversarial Dataset and Large Scale Pretraining",
    author = "Sai, Ananya B. and Mohankumar, Akash Kumar and Arora, Siddhartha and Khapra, Mitesh M.",
    journal = "Transactions of the Association for Computational Linguistics",
    volume = "8",
    year = "2020",
    pages = "810--827",
    doi = "10.1162/tacl_a_00347"
}"""

#: Every entry by its BibTeX key.
BY_KEY = {entry.split("{", 1)[1].split(",", 1)[0]: entry for entry in (XU_2018, LI_2017, GUPTA_2019, SAI_2020)}
