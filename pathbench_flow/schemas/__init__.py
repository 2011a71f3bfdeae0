"""Every schema in one place: the Parquet tables' Arrow schemas (:mod:`.tables`), the config
checked against ``workflow/schemas/config.schema.yaml`` (:mod:`.config`; the JSON schema stays
where Snakemake's convention puts it) and the open-set tables (:mod:`.openset`).
"""
