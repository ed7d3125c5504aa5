"""``SecretsManagerStore``: a mail account's password or OAuth secret in AWS Secrets Manager, one secret each,
named ``{prefix}/{tenant}/{name}`` and tagged with its tenant (the functions' role may read only that prefix).
The reference kept beside the account is the secret's name."""

from __future__ import annotations

from typing import Any

from semfs.config import Settings
from semfs.domain.errors import NotFound

from .clients import call, error_code


class SecretsManagerStore:
    """SecretStore on Secrets Manager (module docstring)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._prefix = settings.aws.secret_prefix.rstrip("/")

    def _call(self, op: str, **kwargs: Any) -> dict[str, Any]:
        result: dict[str, Any] = call(self._settings, "secretsmanager", op, f"secretsmanager {op}", **kwargs)
        return result

    def put(self, tenant_id: str, name: str, secret: str) -> str:
        from botocore.exceptions import ClientError

        ref = f"{self._prefix}/{tenant_id}/{name}"
        try:
            self._call("put_secret_value", SecretId=ref, SecretString=secret)
        except ClientError as e:
            if error_code(e) != "ResourceNotFoundException":
                raise
            self._call("create_secret", Name=ref, SecretString=secret, Tags=[{"Key": "tenant", "Value": tenant_id}])
        return ref

    def get(self, ref: str) -> str:
        from botocore.exceptions import ClientError

        try:
            return str(self._call("get_secret_value", SecretId=ref)["SecretString"])
        except ClientError as e:
            if error_code(e) in ("ResourceNotFoundException", "InvalidRequestException"):  # gone, or being deleted
                raise NotFound("the account's secret is gone: set it again") from e
            raise

    def delete(self, ref: str) -> None:
        from botocore.exceptions import ClientError

        try:  # no recovery window: a removed account's password should not outlive it
            self._call("delete_secret", SecretId=ref, ForceDeleteWithoutRecovery=True)
        except ClientError as e:
            if error_code(e) != "ResourceNotFoundException":
                raise

    def forget_tenant(self, tenant_id: str) -> int:
        prefix = f"{self._prefix}/{tenant_id}/"
        names: list[str] = []
        kwargs: dict[str, Any] = {"Filters": [{"Key": "name", "Values": [prefix]}]}
        while True:  # the name filter matches a prefix; checked again here (it also matches words inside)
            page: dict[str, Any] = self._call("list_secrets", **kwargs)
            names += [str(s["Name"]) for s in page.get("SecretList", []) if str(s["Name"]).startswith(prefix)]
            if not page.get("NextToken"):
                break
            kwargs["NextToken"] = page["NextToken"]
        for name in names:
            self.delete(name)
        return len(names)
