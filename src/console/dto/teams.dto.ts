import { ApiProperty } from '@nestjs/swagger';
import { IsEmail, IsString, MaxLength, MinLength, Validate } from 'class-validator';
import { MaxBcryptBytes } from './console-auth.dto';

export class CreateInviteDto {
  @ApiProperty({ format: 'email', description: 'Who is invited; must not be a member of your organization already.' })
  @IsEmail()
  @MaxLength(254)
  email: string;
}

export class InviteCodeDto {
  @ApiProperty({ description: 'The code: the part of the invitation link after `#`.' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  code: string;
}

export class AcceptInviteDto {
  @ApiProperty({ description: 'The code: the part of the invitation link after `#`.' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  code: string;

  @ApiProperty({ minLength: 12, description: "The new member's password: at least 12 characters, at most 72 bytes." })
  @IsString()
  @MinLength(12)
  @Validate(MaxBcryptBytes)
  password: string;
}

export class ChangePasswordDto {
  @ApiProperty()
  @IsString()
  @MaxLength(1024)
  current_password: string;

  @ApiProperty({ minLength: 12, description: 'At least 12 characters, at most 72 bytes.' })
  @IsString()
  @MinLength(12)
  @Validate(MaxBcryptBytes)
  new_password: string;
}
